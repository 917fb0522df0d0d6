//! `json`: JSON tool results (MCP `tools/call` results, search results, SWE tool output), one
//! node per JSON value.
//!
//! Role = the value's kind (`object`, `array`, `string`, `number`, `bool`, `null`), name = the
//! member name inside an object, text = a scalar's value (strings decoded, numbers as written),
//! key = the JSON path ([`KeyKind::Path`]: `$`, `$.content[0].text`, `$["a key"]`). Text around
//! the JSON (a sentence, a code fence) is skipped with a warning; several values one after the
//! other (JSON Lines) are several top-level nodes (`$`, `$1`, …). A cut or broken document keeps
//! every value read before the break. JSON inside a string (an MCP `text` holding JSON) is left
//! as a string.

use crate::Result;
use crate::state::read::json::{self, JsonKind};
use crate::state::{KeyKind, NodeKey, ParsedState, StateNode, StateParser, TreeBuilder};

/// The `json` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolJson;

impl StateParser for ToolJson {
    fn name(&self) -> &'static str {
        "json"
    }

    fn description(&self) -> &'static str {
        "JSON tool results (MCP, search, SWE): a tree of keys and values, text around it reported"
    }

    /// 0.7 for text that is JSON and nothing else; 0.35 for JSON with text around it or
    /// repairs; 0 otherwise. Only the first 64 KiB are read (a cut there is not held against
    /// the text).
    fn detect(&self, text: &str) -> f32 {
        let starts = text.trim_start().starts_with(['{', '[']);
        let head = super::head(text, 1 << 16);
        if !starts && !head.contains('{') {
            return 0.0;
        }
        let cut = head.len() < text.len();
        let mut doc = json::read(head);
        if cut {
            doc.warnings.retain(|w| {
                !w.message.contains("not closed") && !w.message.contains("malformed string")
            });
        }
        let containers = doc
            .values
            .iter()
            .filter(|v| matches!(v.kind, JsonKind::Object | JsonKind::Array))
            .count();
        match (doc.values.len(), doc.warnings.is_empty()) {
            (0, _) => 0.0,
            (_, true) if starts => 0.7,
            (n, _) if n >= 2 && containers >= 1 => 0.35,
            _ => 0.05,
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let doc = json::read(text);
        let mut b = TreeBuilder::new(self.name());
        for v in doc.values {
            b.push_at(
                v.depth,
                StateNode {
                    role: v.kind.name().into(),
                    name: v.member.unwrap_or_default(),
                    text: v.scalar,
                    key: NodeKey::new(KeyKind::Path, v.path),
                    line: v.line,
                    ..StateNode::default()
                },
            );
        }
        ParsedState::new(b.finish(), doc.warnings, text, "no JSON value found")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_result() {
        let text = r#"{"content": [{"type": "text", "text": "3 files"}], "isError": false}"#;
        let p = ToolJson.parse(text).unwrap();
        let t = &p.tree;
        t.check().unwrap();
        assert_eq!(t.len(), 6);
        let i = t.find_key("$.content[0].text")[0];
        assert_eq!(
            (t.nodes[i].name.as_str(), t.nodes[i].text.as_str()),
            ("text", "3 files")
        );
        assert_eq!(t.nodes[i].depth, 3);
        assert!(ToolJson.detect(text) > 0.6);
        assert!(ToolJson.parse("plain words").is_err());
    }
}
