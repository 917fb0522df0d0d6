//! [`TurnAction`]: how an agent's action becomes the text inside a turn's JSON fence.

use serde_json::Value;

/// An agent action as it goes into the ```` ```json ```` block of a turn prompt.
///
/// - [`TurnAction::Json`]: JSON text (terminal keystroke lists, `{"name","arguments"}` tool
///   calls, our Android action objects), inserted verbatim after trimming, so the caller's key
///   order and spacing survive.
/// - [`TurnAction::Value`]: a JSON value, written the way Python's
///   `json.dumps(v, ensure_ascii=False)` writes it (`", "` and `": "` separators), since the
///   benchmark's rows were made in Python. Object keys come out in the value's order
///   (serde_json sorts them); pass [`TurnAction::Json`] to keep another order.
/// - [`TurnAction::Text`]: a non-JSON action (web `click('12')`, os pyautogui code, a free-form
///   Android action), written as it is (trimmed), as the benchmark's domain list shows them
///   ("BrowserGym-style calls such as `click(bid)`", "free-form pyautogui Python code") and as
///   every Web and OS row of our training data has them. Quoting it as a JSON string instead
///   (`"click('12')"`, this type's behaviour until the demo model v2) put the demo model off
///   its training distribution: on `examples/web/newsletter_axtree.txt` it read every quoted
///   action as a click on a text field.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnAction {
    /// JSON text, inserted verbatim (trimmed).
    Json(String),
    /// A JSON value, written Python-style.
    Value(Value),
    /// Free text, written as it is (trimmed).
    Text(String),
}

impl TurnAction {
    /// [`TurnAction::Json`] if `input` parses as JSON, otherwise [`TurnAction::Text`].
    pub fn parse(input: &str) -> Self {
        match serde_json::from_str::<Value>(input) {
            Ok(_) => TurnAction::Json(input.trim().to_string()),
            Err(_) => TurnAction::Text(input.to_string()),
        }
    }

    /// The text placed inside the fence.
    pub fn to_block_text(&self) -> String {
        match self {
            TurnAction::Json(text) => text.trim().to_string(),
            TurnAction::Value(v) => python_json(v),
            TurnAction::Text(text) => text.trim().to_string(),
        }
    }

    /// The action as a JSON value (a [`TurnAction::Text`] becomes a JSON string).
    pub fn to_value(&self) -> Value {
        match self {
            TurnAction::Json(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            TurnAction::Value(v) => v.clone(),
            TurnAction::Text(text) => Value::String(text.clone()),
        }
    }
}

/// Writes `value` like Python's `json.dumps(value, ensure_ascii=False)`.
pub fn python_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, k);
                out.push_str(": ");
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_text_is_kept_verbatim() {
        let a = TurnAction::parse("  [{\"keystrokes\":\"ls\\n\",\"duration\":0.5}]\n");
        assert_eq!(
            a.to_block_text(),
            "[{\"keystrokes\":\"ls\\n\",\"duration\":0.5}]"
        );
        assert_eq!(
            a.to_value(),
            json!([{"keystrokes": "ls\n", "duration": 0.5}])
        );
    }

    #[test]
    fn text_actions_are_written_as_they_are() {
        let a = TurnAction::parse("click('12')\n");
        assert_eq!(a, TurnAction::Text("click('12')\n".into()));
        assert_eq!(a.to_block_text(), "click('12')");
        let code = TurnAction::Text("import pyautogui\npyautogui.write(\"hi\")".into());
        assert_eq!(
            code.to_block_text(),
            "import pyautogui\npyautogui.write(\"hi\")"
        );
        assert_eq!(
            code.to_value(),
            json!("import pyautogui\npyautogui.write(\"hi\")")
        );
    }

    /// Keys keep their order, as in a Python dict (serde_json's `preserve_order`).
    #[test]
    fn values_are_written_python_style() {
        let v = json!({"name": "web_search", "arguments": {"query": "天气 ☀", "k": 3, "x": [1.5, null, true]}});
        assert_eq!(
            python_json(&v),
            r#"{"name": "web_search", "arguments": {"query": "天气 ☀", "k": 3, "x": [1.5, null, true]}}"#
        );
        assert_eq!(python_json(&json!("a\u{1}\tb")), r#""a\u0001\tb""#);
        assert_eq!(python_json(&json!([])), "[]");
        assert_eq!(python_json(&json!({})), "{}");
    }
}
