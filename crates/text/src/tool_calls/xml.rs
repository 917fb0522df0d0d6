//! The Qwen3-Coder XML form:
//! `<tool_call>\n<function=NAME>\n<parameter=ARG>\nVALUE\n</parameter>\n</function>\n</tool_call>`.

use serde_json::{Map, Value};

use super::{BlockOutcome, TOOL_CALL_CLOSE, ToolCall, ToolSchemas};

const FUNCTION_OPEN: &str = "<function=";
const FUNCTION_CLOSE: &str = "</function>";
const PARAM_OPEN: &str = "<parameter=";
const PARAM_CLOSE: &str = "</parameter>";

/// Parses the text after `<tool_call>` as one XML function call.
///
/// Parameter values may hold any text, including `</parameter>` or `</function>`: a closing
/// tag only counts when what follows it is structure (another parameter, the end of the
/// function or of the block).
pub(super) fn parse_block(after: &str, schemas: &ToolSchemas) -> BlockOutcome {
    let invalid = |consumed: usize, reason: &str| BlockOutcome {
        calls: Vec::new(),
        consumed,
        error: Some(reason.to_owned()),
    };
    let mut pos = skip_ws(after, 0);
    let Some(head) = after[pos..].strip_prefix(FUNCTION_OPEN) else {
        return invalid(block_end(after), "expected <function=NAME>");
    };
    let Some(name_len) = head.find('>').filter(|n| !head[..*n].contains('\n')) else {
        return invalid(block_end(after), "unterminated <function=NAME> tag");
    };
    let name = head[..name_len].trim();
    if name.is_empty() {
        return invalid(block_end(after), "empty function name");
    }
    pos += FUNCTION_OPEN.len() + name_len + 1;

    let mut arguments = Map::new();
    loop {
        pos = skip_ws(after, pos);
        let rest = &after[pos..];
        if let Some(param) = rest.strip_prefix(PARAM_OPEN) {
            let Some(name_len) = param.find('>').filter(|n| !param[..*n].contains('\n')) else {
                return invalid(after.len(), "unterminated <parameter=NAME> tag");
            };
            let param_name = param[..name_len].trim().to_owned();
            let value_start = pos + PARAM_OPEN.len() + name_len + 1;
            let Some((value_len, next)) = find_value_end(&after[value_start..]) else {
                return invalid(
                    after.len(),
                    "unterminated tool call (parameter value runs to the end)",
                );
            };
            let value = strip_one_newline(&after[value_start..value_start + value_len]);
            arguments.insert(
                param_name.clone(),
                schemas.convert(name, &param_name, value),
            );
            pos = value_start + next;
        } else if let Some(tail) = rest.strip_prefix(FUNCTION_CLOSE) {
            // The function is complete; `</tool_call>` is optional after it.
            let tail_start = after.len() - tail.len();
            let close = skip_ws(after, tail_start);
            let consumed = match after[close..].strip_prefix(TOOL_CALL_CLOSE) {
                Some(t) => after.len() - t.len(),
                None => tail_start,
            };
            return complete(name, arguments, consumed);
        } else if let Some(tail) = rest.strip_prefix(TOOL_CALL_CLOSE) {
            // `</function>` forgotten.
            return complete(name, arguments, after.len() - tail.len());
        } else if rest.is_empty() {
            return invalid(after.len(), "unterminated tool call (no </function>)");
        } else {
            return invalid(block_end(after), "unexpected text inside <function>");
        }
    }
}

fn complete(name: &str, arguments: Map<String, Value>, consumed: usize) -> BlockOutcome {
    BlockOutcome {
        calls: vec![ToolCall {
            name: name.to_owned(),
            arguments: Value::Object(arguments),
        }],
        consumed,
        error: None,
    }
}

/// Where a parameter value ends: `(value length, offset just past its closing tag)`.
///
/// The earliest of: a `</parameter>` followed by structure; a new `<parameter=` on its own
/// line (the previous `</parameter>` was forgotten); a `</function>` or `</tool_call>`
/// that ends the block. `None` if the value runs to the end of the text.
fn find_value_end(s: &str) -> Option<(usize, usize)> {
    let closed = occurrences(s, PARAM_CLOSE)
        .find(|&i| followed_by_structure(&s[i + PARAM_CLOSE.len()..]))
        .map(|i| (i, i + PARAM_CLOSE.len()));
    let next_param = s.find(&format!("\n{PARAM_OPEN}")).map(|i| (i, i + 1));
    let function_end = occurrences(s, FUNCTION_CLOSE)
        .find(|&i| ends_block(&s[i + FUNCTION_CLOSE.len()..]))
        .map(|i| (i, i));
    let block_end = occurrences(s, TOOL_CALL_CLOSE)
        .find(|&i| s[..i].ends_with('\n'))
        .map(|i| (i, i));
    [closed, next_param, function_end, block_end]
        .into_iter()
        .flatten()
        .min()
}

/// What may follow a real `</parameter>`.
fn followed_by_structure(rest: &str) -> bool {
    let rest = rest.trim_start();
    rest.is_empty()
        || rest.starts_with(PARAM_OPEN)
        || rest.starts_with(FUNCTION_CLOSE)
        || rest.starts_with(TOOL_CALL_CLOSE)
}

/// Whether a `</function>` followed by `rest` closes the block.
fn ends_block(rest: &str) -> bool {
    let rest = rest.trim_start();
    rest.is_empty() || rest.starts_with(TOOL_CALL_CLOSE)
}

fn occurrences<'a>(s: &'a str, pat: &'a str) -> impl Iterator<Item = usize> + 'a {
    s.match_indices(pat).map(|(i, _)| i)
}

/// Values sit on their own lines: drop one newline after the open tag and one before the
/// close tag, keeping any other whitespace (indentation inside the value matters).
fn strip_one_newline(value: &str) -> &str {
    let value = value.strip_prefix('\n').unwrap_or(value);
    value.strip_suffix('\n').unwrap_or(value)
}

/// An invalid block runs to its `</tool_call>`, or to the end.
fn block_end(after: &str) -> usize {
    after
        .find(TOOL_CALL_CLOSE)
        .map_or(after.len(), |i| i + TOOL_CALL_CLOSE.len())
}

fn skip_ws(s: &str, pos: usize) -> usize {
    s.len() - s[pos..].trim_start().len()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{parse_tool_calls, parse_tool_calls_with};
    use super::*;

    fn one(text: &str) -> ToolCall {
        let p = parse_tool_calls(text);
        assert!(p.invalid.is_empty(), "{:?}", p.invalid);
        assert_eq!(p.calls.len(), 1, "{p:?}");
        p.calls.into_iter().next().unwrap()
    }

    #[test]
    fn multi_line_value_keeps_inner_whitespace() {
        let call = one(
            "<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/n.txt\n</parameter>\n<parameter=content>\nline one\n  indented two\n\n</parameter>\n</function>\n</tool_call>",
        );
        assert_eq!(call.name, "write_file");
        assert_eq!(
            call.arguments,
            json!({"path": "/tmp/n.txt", "content": "line one\n  indented two\n"})
        );
    }

    #[test]
    fn closing_tags_quoted_inside_values() {
        let call = one(
            "<tool_call>\n<function=echo>\n<parameter=text>\nuse </parameter> and </function> literally\n</parameter>\n</function>\n</tool_call>",
        );
        assert_eq!(
            call.arguments,
            json!({"text": "use </parameter> and </function> literally"})
        );
    }

    #[test]
    fn forgotten_closing_tags() {
        let call = one(
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n<parameter=b>\n2\n</function>\n</tool_call>",
        );
        assert_eq!(call.arguments, json!({"a": "1", "b": "2"}));
        let call = one("<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>");
        assert_eq!(call.arguments, json!({"a": "1"}));
        let p = parse_tool_calls(
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\nafter",
        );
        assert_eq!((p.calls.len(), p.content.as_str()), (1, "after"));
    }

    #[test]
    fn dotted_names_no_parameters_and_typed_values() {
        let call = one("<tool_call>\n<function=browser.click-element>\n</function>\n</tool_call>");
        assert_eq!(
            (call.name.as_str(), call.arguments.clone()),
            ("browser.click-element", json!({}))
        );
        let schemas = ToolSchemas::from_tools(&[
            json!({"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}),
        ]);
        let p = parse_tool_calls_with(
            "<tool_call>\n<function=f>\n<parameter=n>\n42\n</parameter>\n</function>\n</tool_call>",
            &schemas,
        );
        assert_eq!(p.calls[0].arguments, json!({"n": 42}));
    }

    #[test]
    fn truncated_and_malformed_blocks_are_invalid() {
        for (text, reason) in [
            (
                "<tool_call>\n<function=f>\n<parameter=a>\nhalf a val",
                "unterminated tool call (parameter value runs to the end)",
            ),
            (
                "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n",
                "unterminated tool call (no </function>)",
            ),
            (
                "<tool_call>\n<function=f",
                "unterminated <function=NAME> tag",
            ),
            (
                "<tool_call>\n<function=>\n</function></tool_call>",
                "empty function name",
            ),
            (
                "<tool_call>\n<function=f>\nstray text\n</function>\n</tool_call>",
                "unexpected text inside <function>",
            ),
        ] {
            let p = parse_tool_calls(text);
            assert!(p.calls.is_empty(), "{text:?}");
            assert_eq!(p.invalid.len(), 1, "{text:?}");
            assert_eq!(p.invalid[0].reason, reason, "{text:?}");
            assert_eq!(p.invalid[0].raw, text);
        }
    }
}
