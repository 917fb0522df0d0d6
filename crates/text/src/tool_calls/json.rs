//! The hermes JSON form: `<tool_call>\n{"name": .., "arguments": ..}\n</tool_call>`.

use serde_json::Value;

use super::{BlockOutcome, TOOL_CALL_CLOSE, ToolCall};

/// Parses the text after `<tool_call>`: one or more JSON values (objects, or lists of
/// objects), then `</tool_call>`. JSON is parsed before looking for the closing tag, so a
/// string holding `</tool_call>` does not end the block early.
pub(super) fn parse_block(after: &str) -> BlockOutcome {
    let mut pos = skip_ws(after, 0);
    let mut calls = Vec::new();
    loop {
        let mut values = serde_json::Deserializer::from_str(&after[pos..]).into_iter::<Value>();
        let value = match values.next() {
            Some(Ok(value)) => value,
            Some(Err(err)) => return fallback(after, format!("invalid JSON: {err}")),
            None => return fallback(after, "empty tool call".into()),
        };
        pos += values.byte_offset();
        if let Err(reason) = collect_calls(value, &mut calls) {
            return fallback(after, reason);
        }
        pos = skip_ws(after, pos);
        let rest = &after[pos..];
        if let Some(tail) = rest.strip_prefix(TOOL_CALL_CLOSE) {
            return BlockOutcome {
                calls,
                consumed: after.len() - tail.len(),
                error: None,
            };
        }
        if rest.is_empty() {
            return BlockOutcome {
                calls: Vec::new(),
                consumed: after.len(),
                error: Some("unterminated tool call (no </tool_call>)".into()),
            };
        }
        if !rest.starts_with(['{', '[']) {
            return fallback(after, "unexpected text after the JSON call".into());
        }
    }
}

/// Turns one JSON value into calls: an object, or a list of objects.
fn collect_calls(value: Value, calls: &mut Vec<ToolCall>) -> Result<(), String> {
    match value {
        Value::Array(items) => items
            .into_iter()
            .try_for_each(|item| collect_calls(item, calls)),
        Value::Object(mut object) => {
            let name = match object.remove("name") {
                Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
                _ => return Err("tool call without a string \"name\"".into()),
            };
            let arguments = object
                .remove("arguments")
                .or_else(|| object.remove("parameters"))
                .unwrap_or_else(|| Value::Object(Default::default()));
            calls.push(ToolCall {
                name,
                arguments: decode_string_arguments(arguments),
            });
            Ok(())
        }
        other => Err(format!("expected a JSON object, found {other}")),
    }
}

/// `"arguments": "{\"x\": 1}"` → `{"x": 1}`; strings that are not a JSON object stay strings.
fn decode_string_arguments(arguments: Value) -> Value {
    if let Value::String(s) = &arguments
        && let Ok(decoded @ Value::Object(_)) = serde_json::from_str::<Value>(s)
    {
        return decoded;
    }
    arguments
}

/// An unparseable block: it runs to the first `</tool_call>`, or to the end if there is none.
fn fallback(after: &str, reason: String) -> BlockOutcome {
    match after.find(TOOL_CALL_CLOSE) {
        Some(end) => BlockOutcome {
            calls: Vec::new(),
            consumed: end + TOOL_CALL_CLOSE.len(),
            error: Some(reason),
        },
        None => BlockOutcome {
            calls: Vec::new(),
            consumed: after.len(),
            error: Some(format!("unterminated tool call: {reason}")),
        },
    }
}

fn skip_ws(s: &str, pos: usize) -> usize {
    s.len() - s[pos..].trim_start().len()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::parse_tool_calls;
    use super::*;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }

    #[test]
    fn glued_objects_and_lists() {
        let p = parse_tool_calls(
            r#"<tool_call>{"name":"a","arguments":{}}{"name":"b","arguments":{"k":[1]}}</tool_call>"#,
        );
        assert_eq!(
            p.calls,
            vec![call("a", json!({})), call("b", json!({"k": [1]}))]
        );
        let p = parse_tool_calls(
            r#"<tool_call>[{"name":"a"}, {"name":"b","parameters":{"x":2}}]</tool_call>"#,
        );
        assert_eq!(
            p.calls,
            vec![call("a", json!({})), call("b", json!({"x": 2}))]
        );
    }

    #[test]
    fn closing_tag_inside_a_string() {
        let p = parse_tool_calls(
            "<tool_call>\n{\"name\": \"say\", \"arguments\": {\"text\": \"write </tool_call> here\"}}\n</tool_call> after",
        );
        assert_eq!(
            p.calls,
            vec![call("say", json!({"text": "write </tool_call> here"}))]
        );
        assert_eq!(p.content, "after");
    }

    #[test]
    fn string_arguments_are_decoded_when_they_hold_an_object() {
        let p = parse_tool_calls(
            r#"<tool_call>{"name": "a", "arguments": "{\"x\": 1}"}</tool_call><tool_call>{"name": "b", "arguments": "plain"}</tool_call>"#,
        );
        assert_eq!(
            p.calls,
            vec![call("a", json!({"x": 1})), call("b", json!("plain"))]
        );
    }

    #[test]
    fn bad_blocks_are_reported_and_skipped() {
        let p = parse_tool_calls(
            "<tool_call>{'name': 'a'}</tool_call>\n<tool_call>{\"name\": \"ok\"}</tool_call>\n<tool_call>{\"arguments\": {}}</tool_call>",
        );
        assert_eq!(p.calls, vec![call("ok", json!({}))]);
        assert_eq!(p.invalid.len(), 2);
        assert_eq!(p.invalid[0].raw, "<tool_call>{'name': 'a'}</tool_call>");
        assert!(
            p.invalid[0].reason.starts_with("invalid JSON"),
            "{}",
            p.invalid[0].reason
        );
        assert!(p.invalid[1].reason.contains("name"));
        assert_eq!(p.content, "");
    }

    #[test]
    fn unterminated_blocks() {
        let p = parse_tool_calls("<tool_call>\n{\"name\": \"scroll\", \"argu");
        assert!(p.calls.is_empty());
        assert_eq!(
            p.invalid[0].raw,
            "<tool_call>\n{\"name\": \"scroll\", \"argu"
        );
        assert!(p.invalid[0].reason.starts_with("unterminated"));
        let p = parse_tool_calls("<tool_call>{\"name\": \"a\"}");
        assert!(p.calls.is_empty() && p.invalid[0].reason.starts_with("unterminated"));
    }
}
