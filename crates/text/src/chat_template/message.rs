//! Chat messages: a ready-made message type, and the normalisation transformers applies to
//! any message before a template sees it.

use minijinja::value::{Serde, Value, ValueKind};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One chat message in the OpenAI / transformers shape.
///
/// Templates accept any `Serialize` type with these field names, so other crates can pass
/// their own message types; this one is for convenience. `None` fields are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text of the message (`None` for an assistant turn holding only tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The thinking of an assistant turn, without `<think>` tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool calls made by an assistant turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<MessageToolCall>>,
    /// For a `tool` message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a `tool` message: the name of the tool that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChatMessage {
    /// A message with a role and text.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: Some(content.into()),
            ..Self::default()
        }
    }

    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    /// An `assistant` message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }

    /// A `tool` message (a tool's result).
    pub fn tool(content: impl Into<String>) -> Self {
        Self::new("tool", content)
    }

    /// Sets the reasoning of an assistant message.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning_content = Some(reasoning.into());
        self
    }

    /// Sets the tool calls of an assistant message.
    pub fn with_tool_calls(mut self, calls: Vec<MessageToolCall>) -> Self {
        self.tool_calls = Some(calls);
        self
    }

    /// Sets the call id a tool message answers.
    pub fn with_tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }
}

/// A tool call inside an assistant message, OpenAI style:
/// `{"id": .., "type": "function", "function": {"name": .., "arguments": ..}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageToolCall {
    /// Call id, echoed back by the tool message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Always `"function"`.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    /// The function and its arguments.
    pub function: FunctionCall,
}

/// The function part of a [`MessageToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Function name.
    pub name: String,
    /// Arguments: normally a JSON object; OpenAI clients send a JSON *string*. Templates
    /// differ in what they accept (Qwen3 prints a string as is, Qwen3-Coder needs an object).
    pub arguments: serde_json::Value,
}

fn function_kind() -> String {
    "function".into()
}

impl MessageToolCall {
    /// A function call with object arguments.
    pub fn function(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self {
            id: None,
            kind: function_kind(),
            function: FunctionCall {
                name: name.into(),
                arguments,
            },
        }
    }
}

impl From<crate::tool_calls::ToolCall> for MessageToolCall {
    fn from(call: crate::tool_calls::ToolCall) -> Self {
        Self::function(call.name, call.arguments)
    }
}

/// Turns a caller's messages into template values the way transformers does before
/// rendering: each message must be a mapping; keys whose value is `None` are dropped; and a
/// reasoning given as `reasoning_content`, `thinking` or `reasoning` is made available
/// under both `thinking` and `reasoning_content`.
pub(crate) fn template_messages<M: Serialize>(messages: &[M]) -> Result<Value> {
    messages
        .iter()
        .enumerate()
        .map(|(index, message)| normalize(index, Value::from(Serde(message))))
        .collect::<Result<Vec<_>>>()
        .map(Value::from)
}

const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

fn normalize(index: usize, message: Value) -> Result<Value> {
    if message.kind() != ValueKind::Map {
        return Err(Error::InvalidMessage {
            index,
            reason: format!("a message must be a mapping, not {}", message.kind()),
        });
    }
    let invalid = |e: minijinja::Error| Error::InvalidMessage {
        index,
        reason: e.to_string(),
    };
    let mut fields: Vec<(Value, Value)> = Vec::new();
    for key in message.try_iter().map_err(invalid)? {
        let value = message.get_item(&key).map_err(invalid)?;
        if value.kind() == ValueKind::Invalid {
            return Err(Error::InvalidMessage {
                index,
                reason: value.to_string(),
            });
        }
        if !value.is_none() && !value.is_undefined() {
            fields.push((key, value));
        }
    }
    let reasoning = REASONING_FIELDS.iter().find_map(|name| {
        fields
            .iter()
            .find(|(k, _)| k.as_str() == Some(name))
            .map(|(_, v)| v.clone())
    });
    let Some(reasoning) = reasoning else {
        return Ok(Value::from_pairs(fields));
    };
    // Python: {"thinking": reasoning, **message, "reasoning_content": reasoning}
    let mut out: Vec<(Value, Value)> = vec![(Value::from("thinking"), reasoning.clone())];
    let set = |out: &mut Vec<(Value, Value)>, key: Value, value: Value| match out
        .iter_mut()
        .find(|(k, _)| *k == key)
    {
        Some(slot) => slot.1 = value,
        None => out.push((key, value)),
    };
    for (key, value) in fields {
        set(&mut out, key, value);
    }
    set(&mut out, Value::from("reasoning_content"), reasoning);
    Ok(Value::from_pairs(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn keys(v: &Value) -> Vec<String> {
        v.try_iter()
            .unwrap()
            .map(|k| k.as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn chat_message_serialises_without_empty_fields() {
        let m = ChatMessage::assistant("ok")
            .with_tool_calls(vec![MessageToolCall::function("click", json!({"id": 3}))]);
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role": "assistant", "content": "ok",
                   "tool_calls": [{"type": "function", "function": {"name": "click", "arguments": {"id": 3}}}]})
        );
        let back: ChatMessage = serde_json::from_value(json!({"role": "tool", "content": "x",
            "tool_call_id": "c1"}))
        .unwrap();
        assert_eq!(back, ChatMessage::tool("x").with_tool_call_id("c1"));
    }

    #[test]
    fn none_values_are_dropped() {
        let msgs = [json!({"role": "assistant", "content": null, "tool_calls": [], "name": "n"})];
        let v = template_messages(&msgs).unwrap();
        let m = v.get_item_by_index(0).unwrap();
        assert_eq!(keys(&m), ["role", "tool_calls", "name"]);
        assert!(m.get_attr("content").unwrap().is_undefined());
    }

    #[test]
    fn reasoning_is_aliased_like_transformers() {
        let msgs = [
            json!({"role": "assistant", "content": "a", "reasoning": "r"}),
            json!({"role": "assistant", "reasoning_content": "r2", "content": "b"}),
            json!({"role": "assistant", "content": "c", "reasoning_content": null, "thinking": "t"}),
        ];
        let v = template_messages(&msgs).unwrap();
        let first = v.get_item_by_index(0).unwrap();
        assert_eq!(
            keys(&first),
            [
                "thinking",
                "role",
                "content",
                "reasoning",
                "reasoning_content"
            ]
        );
        assert_eq!(
            first.get_attr("reasoning_content").unwrap().as_str(),
            Some("r")
        );
        let second = v.get_item_by_index(1).unwrap();
        assert_eq!(
            keys(&second),
            ["thinking", "role", "reasoning_content", "content"]
        );
        let third = v.get_item_by_index(2).unwrap();
        assert_eq!(
            keys(&third),
            ["thinking", "role", "content", "reasoning_content"]
        );
        assert_eq!(
            third.get_attr("reasoning_content").unwrap().as_str(),
            Some("t")
        );
    }

    #[test]
    fn non_mapping_message_is_an_error() {
        let err = template_messages(&[json!({"role": "user"}), json!("hi")]).unwrap_err();
        assert!(
            matches!(err, Error::InvalidMessage { index: 1, .. }),
            "{err}"
        );
    }
}
