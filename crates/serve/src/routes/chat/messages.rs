//! The chat request body and the shaping of its messages for the chat template.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::request::{Stop, StreamOptions};

/// The request body (fields OpenAI clients send that are not listed are ignored).
#[derive(Debug, Deserialize)]
pub(super) struct ChatRequest {
    pub(super) model: Option<String>,
    pub(super) messages: Vec<MessageIn>,
    pub(super) stream: Option<bool>,
    pub(super) stream_options: Option<StreamOptions>,
    pub(super) max_tokens: Option<i64>,
    pub(super) max_completion_tokens: Option<i64>,
    pub(super) temperature: Option<f64>,
    pub(super) top_p: Option<f64>,
    pub(super) top_k: Option<i64>,
    /// Extension: the copy prior ([`Knobs::copy_bias`]).
    ///
    /// [`Knobs::copy_bias`]: crate::request::Knobs::copy_bias
    pub(super) copy_bias: Option<f64>,
    pub(super) seed: Option<i64>,
    pub(super) n: Option<i64>,
    pub(super) stop: Option<Stop>,
    pub(super) tools: Option<Vec<Value>>,
    pub(super) tool_choice: Option<Value>,
    pub(super) chat_template_kwargs: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct MessageIn {
    role: String,
    content: Option<Content>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<ToolCallIn>>,
    tool_call_id: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ToolCallIn {
    id: Option<String>,
    function: FunctionIn,
}

#[derive(Debug, Deserialize)]
struct FunctionIn {
    name: String,
    arguments: Option<Value>,
}

const ROLES: [&str; 5] = ["system", "developer", "user", "assistant", "tool"];

/// Checks one message and shapes it for the chat template.
pub(super) fn template_message(i: usize, m: MessageIn) -> Result<Value, ApiError> {
    let field = |f: &str| format!("messages[{i}].{f}");
    if !ROLES.contains(&m.role.as_str()) {
        return Err(ApiError::bad_request(
            Some(&field("role")),
            format!(
                "`{}` is not a valid role; use system, user, assistant or tool.",
                m.role
            ),
        ));
    }
    let role = if m.role == "developer" {
        "system".to_owned()
    } else {
        m.role
    };
    let content = match m.content {
        None => None,
        Some(Content::Text(t)) => Some(t),
        Some(Content::Parts(parts)) => {
            let mut text = String::new();
            for (j, part) in parts.into_iter().enumerate() {
                match (part.kind.as_str(), part.text) {
                    ("text", Some(t)) => text.push_str(&t),
                    _ => {
                        return Err(ApiError::bad_request(
                            Some(&field(&format!("content[{j}]"))),
                            "Only text content parts ({\"type\": \"text\", \"text\": ...}) are supported.",
                        ));
                    }
                }
            }
            Some(text)
        }
    };
    if content.is_none() && m.tool_calls.is_none() {
        return Err(ApiError::bad_request(
            Some(&field("content")),
            "A message needs `content` (or, from the assistant, `tool_calls`).",
        ));
    }
    let mut out = Map::new();
    out.insert("role".into(), role.into());
    if let Some(c) = content {
        out.insert("content".into(), c.into());
    }
    if let Some(r) = m.reasoning_content.or(m.reasoning) {
        out.insert("reasoning_content".into(), r.into());
    }
    if let Some(calls) = m.tool_calls {
        let mut shaped = Vec::new();
        for (j, call) in calls.into_iter().enumerate() {
            // OpenAI clients send arguments as a JSON string; templates need the object.
            let arguments = match call.function.arguments {
                None | Some(Value::Null) => json!({}),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                    Ok(v) if v.is_object() => v,
                    _ => {
                        return Err(ApiError::bad_request(
                            Some(&field(&format!("tool_calls[{j}].function.arguments"))),
                            "Tool call arguments must be a JSON object (or a string holding one).",
                        ));
                    }
                },
                Some(v) if v.is_object() => v,
                Some(_) => {
                    return Err(ApiError::bad_request(
                        Some(&field(&format!("tool_calls[{j}].function.arguments"))),
                        "Tool call arguments must be a JSON object (or a string holding one).",
                    ));
                }
            };
            let mut c = json!({"type": "function",
                "function": {"name": call.function.name, "arguments": arguments}});
            if let Some(id) = call.id {
                c["id"] = id.into();
            }
            shaped.push(c);
        }
        out.insert("tool_calls".into(), shaped.into());
    }
    if let Some(id) = m.tool_call_id {
        out.insert("tool_call_id".into(), id.into());
    }
    if let Some(name) = m.name {
        out.insert("name".into(), name.into());
    }
    Ok(Value::Object(out))
}
