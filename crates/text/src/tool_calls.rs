//! Tool calls in model output: `<tool_call>` blocks in the Qwen3-Coder XML form
//!
//! ```text
//! <tool_call>
//! <function=click>
//! <parameter=element_id>
//! 42
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! or the hermes JSON form (`<tool_call>\n{"name": "click", "arguments": {...}}\n</tool_call>`),
//! detected per block. Parse the *content* part of the output (after
//! [`crate::reasoning::split_reasoning`]), so calls quoted inside the thinking are ignored.
//!
//! Tolerated slips: arguments as a JSON string, `parameters` instead of `arguments`, several
//! JSON objects glued in one block, `</tool_call>` inside a JSON string, a missing
//! `</parameter>` or `</function>`, closing tags quoted inside a parameter value, blank lines
//! between blocks. A block cut off by `max_tokens` is reported in
//! [`ParsedToolCalls::invalid`], never guessed at.

mod json;
mod schema;
mod xml;

use serde::{Deserialize, Serialize};

pub use schema::ToolSchemas;

/// Opening tag of a tool-call block.
pub const TOOL_CALL_OPEN: &str = "<tool_call>";
/// Closing tag of a tool-call block.
pub const TOOL_CALL_CLOSE: &str = "</tool_call>";

/// One parsed call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Function name.
    pub name: String,
    /// Arguments, normally a JSON object. XML values are strings unless the tool's schema
    /// gives another type (see [`ToolSchemas`]); a JSON-form call's arguments are kept as
    /// given, with a string holding a JSON object decoded.
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// The arguments as a JSON string, the way OpenAI's API carries them.
    pub fn arguments_json(&self) -> String {
        self.arguments.to_string()
    }
}

/// Which syntax a block used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallFormat {
    /// `<function=NAME><parameter=ARG>VALUE</parameter></function>` (Qwen3-Coder, Qwen3.5).
    Xml,
    /// `{"name": .., "arguments": ..}` (hermes style, Qwen2.5/Qwen3).
    Json,
}

/// A `<tool_call>` block that could not be turned into calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidToolCall {
    /// The block's text, from `<tool_call>` to its end (or the end of the output).
    pub raw: String,
    /// Why it was rejected.
    pub reason: String,
}

/// The result of [`parse_tool_calls`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedToolCalls {
    /// The text outside the blocks, trimmed.
    pub content: String,
    /// The calls, in order.
    pub calls: Vec<ToolCall>,
    /// Blocks that were not valid calls (e.g. cut off at `max_tokens`).
    pub invalid: Vec<InvalidToolCall>,
}

/// What a format parser made of one block.
pub(crate) struct BlockOutcome {
    /// Calls found (empty when `error` is set).
    calls: Vec<ToolCall>,
    /// Bytes of the text after `<tool_call>` that belong to the block, closing tag included.
    consumed: usize,
    /// Why the block is invalid, if it is.
    error: Option<String>,
}

/// Parses tool calls without tool schemas (XML values stay strings).
pub fn parse_tool_calls(text: &str) -> ParsedToolCalls {
    parse_tool_calls_with(text, &ToolSchemas::default())
}

/// Parses tool calls, typing XML parameter values by the tools' JSON schemas.
pub fn parse_tool_calls_with(text: &str, schemas: &ToolSchemas) -> ParsedToolCalls {
    let mut out = ParsedToolCalls::default();
    let mut content = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find(TOOL_CALL_OPEN) {
        content.push_str(&rest[..pos]);
        let after = &rest[pos + TOOL_CALL_OPEN.len()..];
        let outcome = match block_format(after) {
            ToolCallFormat::Xml => xml::parse_block(after, schemas),
            ToolCallFormat::Json => json::parse_block(after),
        };
        let consumed = outcome.consumed.min(after.len());
        match outcome.error {
            None => out.calls.extend(outcome.calls),
            Some(reason) => out.invalid.push(InvalidToolCall {
                raw: format!("{TOOL_CALL_OPEN}{}", &after[..consumed]),
                reason,
            }),
        }
        rest = &after[consumed..];
    }
    content.push_str(rest);
    out.content = content.trim().to_owned();
    out
}

/// The syntax of a block, from its first non-blank text.
pub fn block_format(after_open_tag: &str) -> ToolCallFormat {
    if after_open_tag.trim_start().starts_with("<function") {
        ToolCallFormat::Xml
    } else {
        ToolCallFormat::Json
    }
}

/// Whether a streamed text may be starting a tool call: it contains `<tool_call>` or ends
/// in a prefix of it. A streaming server holds content back while this is true.
pub fn may_contain_tool_call(text: &str) -> bool {
    text.contains(TOOL_CALL_OPEN) || crate::tags::partial_tag_len(text, &[TOOL_CALL_OPEN]) > 0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn mixed_formats_and_surrounding_text() {
        let text = "I'll do both.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n\n<tool_call>\n<function=b>\n<parameter=y>\nhi\n</parameter>\n</function>\n</tool_call>";
        let parsed = parse_tool_calls(text);
        assert_eq!(parsed.content, "I'll do both.");
        assert_eq!(
            parsed.calls,
            vec![
                ToolCall {
                    name: "a".into(),
                    arguments: json!({"x": 1})
                },
                ToolCall {
                    name: "b".into(),
                    arguments: json!({"y": "hi"})
                },
            ]
        );
        assert!(parsed.invalid.is_empty());
        assert_eq!(parsed.calls[0].arguments_json(), r#"{"x":1}"#);
    }

    #[test]
    fn no_blocks_is_all_content() {
        let parsed = parse_tool_calls("  just text <tool_ca  ");
        assert_eq!(
            parsed,
            ParsedToolCalls {
                content: "just text <tool_ca".into(),
                ..Default::default()
            }
        );
    }

    #[test]
    fn streaming_hint() {
        assert!(may_contain_tool_call("text <tool_"));
        assert!(may_contain_tool_call("a <tool_call>{"));
        assert!(!may_contain_tool_call("a <b> c"));
    }
}
