//! Tool calls found in streamed output, emitted as soon as each block is complete.
//!
//! Blocks are `<tool_call>…</tool_call>` in the Qwen3.5 XML form or the JSON form, parsed
//! with [`agentworld_text::tool_calls`] (XML values typed by the request's tool schemas; a
//! value that does not fit its type stays text and the call is kept). A block is complete
//! when a `</tool_call>` closes it and everything up to there parses as calls; a block still
//! open when generation ends is parsed as it stands (the XML form may omit `</tool_call>`),
//! and if it holds no valid call its raw text is returned as content.
//!
//! # Calls inside the thinking
//!
//! - A call in the reasoning (a JSON-form block; an XML-form block ends the reasoning, see
//!   [`agentworld_text::reasoning`]) is a **draft**. It is returned as a call, when it
//!   completes, even if the answer never repeats it.
//! - A `</think>` in the content (the model closed its thinking after an XML call had already
//!   ended the reasoning) turns every call returned so far into a draft; it is dropped from
//!   the content.
//! - A call in the content that equals (same name, same arguments) a draft that no earlier
//!   call has matched is the draft repeated: it is not returned again. Each draft absorbs at
//!   most one repeat; calls repeated within the answer itself are all kept.
//!
//! So calls come out in order of first appearance, and a call drafted in the thinking and
//! repeated after it counts once. Streaming and non-streaming responses run this same code
//! and give the same calls.

use agentworld_text::reasoning::THINK_CLOSE;
use agentworld_text::tool_calls::{
    TOOL_CALL_CLOSE, TOOL_CALL_OPEN, ToolCall, ToolSchemas, parse_tool_calls_with,
};

/// A piece of content after tool-call extraction.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPiece {
    /// Text outside tool-call blocks.
    Text(String),
    /// Calls to return (drafts' repeats already removed).
    Calls(Vec<ToolCall>),
}

/// Extracts tool calls from the reasoning and content streams of one generation.
#[derive(Debug, Clone)]
pub struct ToolCallStream {
    schemas: ToolSchemas,
    /// Content not yet released: a partial tag, or an open block starting with `<tool_call>`.
    content: String,
    /// Reasoning from the first place a block might start.
    reasoning: String,
    /// Calls that may absorb one later repeat: `(call, absorbed)`.
    drafts: Vec<(ToolCall, bool)>,
    /// Content calls returned since the last `</think>`.
    undecided: Vec<ToolCall>,
}

impl ToolCallStream {
    /// A stream typing XML parameter values by `schemas`.
    pub fn new(schemas: ToolSchemas) -> Self {
        Self {
            schemas,
            content: String::new(),
            reasoning: String::new(),
            drafts: Vec::new(),
            undecided: Vec::new(),
        }
    }

    /// Scans reasoning text (which is passed on verbatim by the caller); returns the draft
    /// calls completed by it.
    pub fn push_reasoning(&mut self, text: &str) -> Vec<ToolCall> {
        self.reasoning.push_str(text);
        let mut calls = Vec::new();
        loop {
            if !self.reasoning.starts_with(TOOL_CALL_OPEN) {
                match self.reasoning.find(TOOL_CALL_OPEN) {
                    Some(pos) => {
                        self.reasoning.drain(..pos);
                    }
                    None => {
                        let keep = partial_tag_len(&self.reasoning, &[TOOL_CALL_OPEN]);
                        let cut = self.reasoning.len() - keep;
                        self.reasoning.drain(..cut);
                        return calls;
                    }
                }
            }
            match complete_block(&self.reasoning, &self.schemas) {
                Some((end, found)) => {
                    self.reasoning.drain(..end);
                    for call in found {
                        warn_misfits(&self.schemas, &call);
                        self.drafts.push((call.clone(), false));
                        calls.push(call);
                    }
                }
                None => return calls,
            }
        }
    }

    /// Scans content text; returns text to send and calls to return, in order.
    pub fn push_content(&mut self, text: &str) -> Vec<ContentPiece> {
        self.content.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.content.starts_with(TOOL_CALL_OPEN) {
                match complete_block(&self.content, &self.schemas) {
                    Some((end, found)) => {
                        self.content.drain(..end);
                        self.returned(found, &mut out);
                        continue;
                    }
                    None => return out,
                }
            }
            let open = self.content.find(TOOL_CALL_OPEN);
            let close = self.content.find(THINK_CLOSE);
            match (open, close) {
                (Some(o), c) if c.is_none_or(|c| o < c) => {
                    let text: String = self.content.drain(..o).collect();
                    push_text(&mut out, text);
                }
                (_, Some(c)) => {
                    let text: String = self.content.drain(..c).collect();
                    push_text(&mut out, text);
                    self.content.drain(..THINK_CLOSE.len());
                    self.drafts
                        .extend(self.undecided.drain(..).map(|call| (call, false)));
                }
                _ => {
                    let keep = partial_tag_len(&self.content, &[TOOL_CALL_OPEN, THINK_CLOSE]);
                    let cut = self.content.len() - keep;
                    let text: String = self.content.drain(..cut).collect();
                    push_text(&mut out, text);
                    return out;
                }
            }
        }
    }

    /// Ends both streams: parses blocks left open and releases held text.
    pub fn finish(&mut self) -> Vec<ContentPiece> {
        let mut out = Vec::new();
        if self.reasoning.starts_with(TOOL_CALL_OPEN) {
            let parsed = parse_tool_calls_with(&self.reasoning, &self.schemas);
            let drafts: Vec<ToolCall> = parsed.calls;
            self.drafts
                .extend(drafts.iter().cloned().map(|call| (call, false)));
            if !drafts.is_empty() {
                out.push(ContentPiece::Calls(drafts));
            }
        }
        self.reasoning.clear();
        let rest = std::mem::take(&mut self.content);
        if rest.starts_with(TOOL_CALL_OPEN) {
            let parsed = parse_tool_calls_with(&rest, &self.schemas);
            if parsed.calls.is_empty() {
                push_text(&mut out, rest);
            } else {
                self.returned(parsed.calls, &mut out);
                let mut text = parsed.content;
                for invalid in parsed.invalid {
                    text.push_str(&invalid.raw);
                }
                push_text(&mut out, text);
            }
        } else {
            push_text(&mut out, rest);
        }
        out
    }

    /// Applies the draft rule to content calls and queues the ones to return.
    fn returned(&mut self, calls: Vec<ToolCall>, out: &mut Vec<ContentPiece>) {
        let mut kept = Vec::new();
        for call in calls {
            warn_misfits(&self.schemas, &call);
            if let Some(draft) = self
                .drafts
                .iter_mut()
                .find(|(d, absorbed)| !absorbed && *d == call)
            {
                draft.1 = true;
                continue;
            }
            self.undecided.push(call.clone());
            kept.push(call);
        }
        if !kept.is_empty() {
            out.push(ContentPiece::Calls(kept));
        }
    }
}

/// Logs a warning for each argument the schema types but the model wrote as text that does
/// not fit (the call is kept, with the value as a string).
fn warn_misfits(schemas: &ToolSchemas, call: &ToolCall) {
    let Some(args) = call.arguments.as_object() else {
        return;
    };
    for (param, value) in args {
        if let (Some(types), serde_json::Value::String(text)) =
            (schemas.param_types(&call.name, param), value)
            && !types.is_empty()
            && !types.iter().any(|t| t == "string")
        {
            tracing::warn!(
                "tool call `{}`: parameter `{param}` = {text:?} does not fit its declared type \
                 {types:?}; kept as text",
                call.name
            );
        }
    }
}

fn push_text(out: &mut Vec<ContentPiece>, text: String) {
    if !text.is_empty() {
        out.push(ContentPiece::Text(text));
    }
}

/// If `text` (starting with `<tool_call>`) begins with complete blocks up to some
/// `</tool_call>`, returns the end of that tag and the calls.
fn complete_block(text: &str, schemas: &ToolSchemas) -> Option<(usize, Vec<ToolCall>)> {
    let mut from = TOOL_CALL_OPEN.len();
    while let Some(pos) = text[from..].find(TOOL_CALL_CLOSE) {
        let end = from + pos + TOOL_CALL_CLOSE.len();
        let parsed = parse_tool_calls_with(&text[..end], schemas);
        if parsed.invalid.is_empty() && !parsed.calls.is_empty() && parsed.content.is_empty() {
            return Some((end, parsed.calls));
        }
        from = end;
    }
    None
}

/// Length of the longest suffix of `text` that is a proper prefix of one of `tags` (ASCII
/// tags starting with `<`, so the cut is on a char boundary).
fn partial_tag_len(text: &str, tags: &[&str]) -> usize {
    let Some(start) = text.rfind('<') else {
        return 0;
    };
    let tail = &text[start..];
    if tags
        .iter()
        .any(|tag| tag.len() > tail.len() && tag.starts_with(tail))
    {
        tail.len()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const XML: &str =
        "<tool_call>\n<function=click>\n<parameter=id>\n3\n</parameter>\n</function>\n</tool_call>";

    fn schemas() -> ToolSchemas {
        ToolSchemas::from_tools(&[json!({"type": "function", "function": {"name": "click",
            "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}}}})])
    }

    /// Feeds content in pieces of `size` bytes (on char boundaries); returns (text, calls).
    fn content(text: &str, size: usize) -> (String, Vec<ToolCall>) {
        let mut s = ToolCallStream::new(schemas());
        let mut pieces = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            pieces.extend(s.push_content(&rest[..cut]));
            rest = &rest[cut..];
        }
        pieces.extend(s.finish());
        collect(pieces)
    }

    fn collect(pieces: Vec<ContentPiece>) -> (String, Vec<ToolCall>) {
        let (mut text, mut calls) = (String::new(), Vec::new());
        for p in pieces {
            match p {
                ContentPiece::Text(t) => text.push_str(&t),
                ContentPiece::Calls(c) => calls.extend(c),
            }
        }
        (text, calls)
    }

    fn click(id: i64) -> ToolCall {
        ToolCall {
            name: "click".into(),
            arguments: json!({ "id": id }),
        }
    }

    #[test]
    fn xml_and_json_blocks_in_any_chunking() {
        let text = format!(
            "I'll click.\n{XML}\n<tool_call>\n{{\"name\": \"click\", \"arguments\": {{\"id\": 4}}}}\n</tool_call>"
        );
        for size in [1, 2, 3, 7, 1000] {
            let (t, calls) = content(&text, size);
            assert_eq!(t.trim(), "I'll click.", "size {size}");
            assert_eq!(calls, vec![click(3), click(4)], "size {size}");
        }
    }

    #[test]
    fn a_value_that_misfits_its_type_keeps_the_call() {
        let text = XML.replace("\n3\n", "\nthe third\n");
        let (_, calls) = content(&text, 5);
        assert_eq!(calls[0].arguments, json!({"id": "the third"}));
    }

    #[test]
    fn unclosed_and_broken_blocks() {
        let (_, calls) = content(XML.trim_end_matches("\n</tool_call>"), 4);
        assert_eq!(calls, vec![click(3)], "XML may omit </tool_call>");
        let cut = "done <tool_call>\n<function=click>\n<parameter=id>\n3";
        let (t, calls) = content(cut, 4);
        assert!(calls.is_empty());
        assert_eq!(t, cut, "an unparsable block is returned as text");
    }

    #[test]
    fn drafts_in_the_thinking_count_once() {
        let json_call =
            "<tool_call>\n{\"name\": \"click\", \"arguments\": {\"id\": 3}}\n</tool_call>";
        // Drafted in the reasoning (JSON stays there), repeated in the answer.
        let mut s = ToolCallStream::new(schemas());
        assert_eq!(
            s.push_reasoning(&format!("maybe {json_call} yes")),
            vec![click(3)]
        );
        let (_, calls) = collect([s.push_content(XML), s.finish()].concat());
        assert!(calls.is_empty(), "the repeat is absorbed: {calls:?}");

        // Only in the reasoning: still returned.
        let mut s = ToolCallStream::new(schemas());
        assert_eq!(s.push_reasoning(json_call), vec![click(3)]);
        assert_eq!(
            collect([s.push_content("Done."), s.finish()].concat()).1,
            vec![]
        );

        // An XML draft ended the reasoning, then </think>, then the same call and a new one.
        let text = format!(
            "{XML}\nchecking\n</think>\n\n{XML}\n{}",
            XML.replace('3', "5")
        );
        let (t, calls) = content(&text, 3);
        assert_eq!(calls, vec![click(3), click(5)]);
        assert!(!t.contains("</think>"), "{t:?}");

        // Repeats inside the answer itself are kept.
        let (_, calls) = content(&format!("{XML}\n{XML}"), 6);
        assert_eq!(calls, vec![click(3), click(3)]);
    }
}
