//! Parameter types from tool schemas, to type the string values of XML tool calls.

use std::collections::HashMap;

use serde_json::Value;

/// The declared JSON types of each tool's parameters, read from OpenAI-style tool schemas.
///
/// XML tool calls carry every value as text; with a schema, `42` for an `integer` parameter
/// becomes the number 42, while `123` for a `string` parameter stays `"123"`. A value that
/// does not fit its type (a date for an `integer`) is kept as a string rather than dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSchemas {
    tools: HashMap<String, HashMap<String, Vec<String>>>,
}

impl ToolSchemas {
    /// Reads tool schemas in either the OpenAI form
    /// `{"type": "function", "function": {"name", "parameters"}}` or the bare
    /// `{"name", "parameters"}` form. Entries without a name are skipped.
    pub fn from_tools(tools: &[Value]) -> Self {
        let mut out = Self::default();
        for tool in tools {
            let function = tool.get("function").unwrap_or(tool);
            let Some(name) = function.get("name").and_then(Value::as_str) else {
                continue;
            };
            let properties = function
                .get("parameters")
                .and_then(|p| p.get("properties"))
                .and_then(Value::as_object);
            let params = properties
                .into_iter()
                .flatten()
                .map(|(param, spec)| (param.clone(), declared_types(spec)))
                .collect();
            out.tools.insert(name.to_owned(), params);
        }
        out
    }

    /// The declared types of a parameter (`None` if the tool or parameter is unknown).
    pub fn param_types(&self, tool: &str, param: &str) -> Option<&[String]> {
        self.tools.get(tool)?.get(param).map(Vec::as_slice)
    }

    /// Converts an XML parameter's text to a JSON value by its declared types.
    pub fn convert(&self, tool: &str, param: &str, raw: &str) -> Value {
        match self.param_types(tool, param) {
            Some(types) => convert_typed(raw, types),
            None => Value::String(raw.to_owned()),
        }
    }
}

/// `"type": "integer"`, `"type": ["string", "null"]`, or the types of `anyOf`/`oneOf` branches.
fn declared_types(spec: &Value) -> Vec<String> {
    match spec.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| spec.get(*k).and_then(Value::as_array))
            .flatten()
            .flat_map(declared_types)
            .collect(),
    }
}

fn convert_typed(raw: &str, types: &[String]) -> Value {
    if types.is_empty() || types.iter().any(|t| t == "string") {
        return Value::String(raw.to_owned());
    }
    let text = raw.trim();
    for ty in types {
        let converted = match ty.as_str() {
            "integer" => text.parse::<i64>().ok().map(Value::from),
            "number" => text.parse::<i64>().ok().map(Value::from).or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(Value::from)
            }),
            "boolean" => match text.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => matches!(text, "null" | "None").then_some(Value::Null),
            "object" => serde_json::from_str(text).ok().filter(Value::is_object),
            "array" => serde_json::from_str(text).ok().filter(Value::is_array),
            _ => None,
        };
        if let Some(value) = converted {
            return value;
        }
    }
    Value::String(raw.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schemas() -> ToolSchemas {
        ToolSchemas::from_tools(&[
            json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
                "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                "s": {"type": "string"}, "o": {"type": "object"}, "a": {"type": "array"},
                "maybe": {"type": ["integer", "null"]}, "any": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "free": {"description": "no type"}}}}}),
            json!({"name": "bare", "parameters": {"properties": {"k": {"type": "integer"}}}}),
            json!({"description": "nameless"}),
        ])
    }

    #[test]
    fn values_follow_their_types() {
        let s = schemas();
        assert_eq!(s.convert("f", "n", "42"), json!(42));
        assert_eq!(s.convert("f", "x", "2.5"), json!(2.5));
        assert_eq!(s.convert("f", "x", "3"), json!(3));
        assert_eq!(s.convert("f", "b", "True"), json!(true));
        assert_eq!(s.convert("f", "s", "123"), json!("123"));
        assert_eq!(
            s.convert("f", "o", "{\"city\": \"Paris\"}"),
            json!({"city": "Paris"})
        );
        assert_eq!(s.convert("f", "a", "[1, 2]"), json!([1, 2]));
        assert_eq!(s.convert("f", "maybe", "null"), json!(null));
        assert_eq!(
            s.convert("f", "any", "7"),
            json!("7"),
            "a string branch keeps text"
        );
        assert_eq!(s.convert("f", "free", "7"), json!("7"));
        assert_eq!(s.convert("bare", "k", " 9 "), json!(9));
    }

    #[test]
    fn misfits_and_unknowns_stay_strings() {
        let s = schemas();
        assert_eq!(s.convert("f", "n", "2026-01-15"), json!("2026-01-15"));
        assert_eq!(s.convert("f", "o", "[1]"), json!("[1]"));
        assert_eq!(s.convert("f", "x", "NaN"), json!("NaN"));
        assert_eq!(s.convert("f", "unknown", "1"), json!("1"));
        assert_eq!(s.convert("nope", "n", "1"), json!("1"));
        assert_eq!(
            s.param_types("f", "maybe"),
            Some(&["integer".to_owned(), "null".to_owned()][..])
        );
    }
}
