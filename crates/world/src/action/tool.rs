//! Tool calls (mcp, search, swe): `{"name": "...", "arguments": {...}}`.
//!
//! Source: the spec's tool rows (`shared/spec/agentworld.md`) and the Qwen3 hermes-style
//! tool-call format (`shared/cases/qwen/example_strings.md`): `arguments` may be an object or a
//! JSON-encoded string of one; `parameters` is accepted in its place (seen in the wild);
//! a missing `arguments` reads as `{}`. The JSON may be wrapped in `<tool_call>…</tool_call>`.

use serde_json::{Map, Value};

use super::ActionError;
use super::terminal::json_type;

/// A parsed tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments object.
    pub arguments: Map<String, Value>,
}

/// Parses one tool call from JSON text (optionally inside `<tool_call>` tags).
pub fn parse(text: &str) -> Result<ToolCall, ActionError> {
    let mut body = text.trim();
    if let Some(rest) = body.strip_prefix("<tool_call>") {
        body = rest.trim();
        body = body.strip_suffix("</tool_call>").unwrap_or(body).trim();
    }
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ActionError::new(format!("tool call: not JSON ({e})")))?;
    let Value::Object(mut obj) = value else {
        return Err(ActionError::new(format!(
            "tool call: expected an object {{\"name\", \"arguments\"}}, got {}",
            json_type(&value)
        )));
    };
    let name = match obj.remove("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(Value::String(_)) => return Err(ActionError::new("tool call: name is empty")),
        Some(other) => {
            return Err(ActionError::new(format!(
                "tool call: name must be a string, got {}",
                json_type(&other)
            )));
        }
        None => return Err(ActionError::new("tool call: name missing")),
    };
    let (field, args) = match (obj.remove("arguments"), obj.remove("parameters")) {
        (Some(_), Some(_)) => {
            return Err(ActionError::new(format!(
                "{name}: both arguments and parameters given"
            )));
        }
        (Some(a), None) => ("arguments", a),
        (None, Some(p)) => ("parameters", p),
        (None, None) => ("arguments", Value::Object(Map::new())),
    };
    let arguments = match args {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                return Err(ActionError::new(format!(
                    "{name}: {field} is a string holding {}, not an object",
                    json_type(&other)
                )));
            }
            Err(e) => {
                return Err(ActionError::new(format!(
                    "{name}: {field} is a string that is not JSON ({e})"
                )));
            }
        },
        other => {
            return Err(ActionError::new(format!(
                "{name}: {field} must be an object, got {}",
                json_type(&other)
            )));
        }
    };
    if let Some(k) = obj
        .keys()
        .find(|k| k.as_str() != "id" && k.as_str() != "type")
    {
        return Err(ActionError::new(format!(
            "{name}: unknown field '{k}' (fields: name, arguments)"
        )));
    }
    Ok(ToolCall { name, arguments })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_object_string_and_wrapped_forms() {
        let c = parse(r#"{"name": "web_search", "arguments": {"query": ["rust"]}}"#).unwrap();
        assert_eq!(c.name, "web_search");
        assert_eq!(c.arguments["query"][0], "rust");
        let c = parse(r#"{"name": "click", "arguments": "{\"element_id\": 42}"}"#).unwrap();
        assert_eq!(c.arguments["element_id"], 42);
        let c = parse("<tool_call>\n{\"name\": \"a\", \"parameters\": {\"k\": 1}}\n</tool_call>")
            .unwrap();
        assert_eq!(c.arguments["k"], 1);
        assert!(
            parse(r#"{"name": "list_files"}"#)
                .unwrap()
                .arguments
                .is_empty()
        );
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(err(r#"{"arguments": {}}"#), "tool call: name missing");
        assert_eq!(
            err(r#"{"name": "", "arguments": {}}"#),
            "tool call: name is empty"
        );
        assert!(err(r#"{"name": 3}"#).contains("name must be a string, got a number"));
        assert_eq!(
            err(r#"{"name": "f", "arguments": [1]}"#),
            "f: arguments must be an object, got a list"
        );
        assert!(
            err(r#"{"name": "f", "arguments": "[1]"}"#)
                .contains("f: arguments is a string holding a list")
        );
        assert!(err(r#"{"name": "f", "arguments": "{oops"}"#).contains("not JSON"));
        assert!(err(r#"{"name": "f", "arguments": {}, "parameters": {}}"#).contains("both"));
        assert!(err(r#"{"name": "f", "argumnts": {}}"#).contains("unknown field 'argumnts'"));
        assert!(err("[1]").contains("expected an object"));
        assert!(err("<tool_call>\n{\"name\": \"scroll\", \"argu").contains("not JSON"));
    }
}
