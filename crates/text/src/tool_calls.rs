//! stub
/// stub
#[derive(Debug, Clone)]
pub struct ToolCall { /// n
pub name: String, /// a
pub arguments: serde_json::Value }
