//! `terminal`: a terminal screen as text, read with [`TerminalScreen`].
//!
//! The tree has one `screen` node (key `screen`; attributes `lines`, and when the last
//! non-blank line is a shell prompt: `user`, `host`, `cwd`, `idle`) and, under it, one node per
//! line: role `line` (or `prompt` for a prompt line, with attributes `user`, `host`, `cwd`,
//! `symbol`, `input`), text = the line, key = its 1-based line number.

use crate::Result;
use crate::state::terminal::{PromptLine, TerminalScreen};
use crate::state::{KeyKind, NodeKey, ParsedState, StateNode, StateParser, TreeBuilder};

/// The `terminal` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal;

impl StateParser for Terminal {
    fn name(&self) -> &'static str {
        "terminal"
    }

    fn description(&self) -> &'static str {
        "a terminal screen: lines of text, usually ending at a shell prompt (user@host:~$ )"
    }

    /// 0.6 when the last non-blank line is a shell prompt; 0.05 for any other text (the
    /// fallback: every text is a screen).
    fn detect(&self, text: &str) -> f32 {
        let last = text.lines().rev().find(|l| !l.trim().is_empty());
        match last {
            Some(l) if PromptLine::parse(l).is_some() => 0.6,
            Some(_) => 0.05,
            None => 0.0,
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let screen = TerminalScreen::parse(text);
        let mut b = TreeBuilder::new(self.name());
        let mut root = StateNode {
            key: NodeKey::new(KeyKind::Path, "screen"),
            attributes: vec![("lines".into(), screen.lines.len().to_string())],
            line: 1,
            ..StateNode::new("screen")
        };
        if let Some(p) = screen.prompt() {
            root.attributes.extend([
                ("user".into(), p.user),
                ("host".into(), p.host),
                ("cwd".into(), p.cwd),
                ("idle".into(), screen.is_idle().to_string()),
            ]);
        }
        b.open(root);
        for (i, line) in screen.lines.iter().enumerate() {
            let mut node = StateNode {
                text: line.clone(),
                key: NodeKey::new(KeyKind::Path, (i + 1).to_string()),
                line: i + 1,
                ..StateNode::new("line")
            };
            if let Some(p) = PromptLine::parse(line) {
                node.role = "prompt".into();
                node.attributes = vec![
                    ("user".into(), p.user),
                    ("host".into(), p.host),
                    ("cwd".into(), p.cwd),
                    ("symbol".into(), p.symbol.to_string()),
                    ("input".into(), p.input),
                ];
            }
            b.leaf(node);
        }
        ParsedState::new(b.finish(), Vec::new(), text, "empty screen")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_lines_and_prompt() {
        let p = Terminal.parse("total 0\nuser@sandbox:~/docs$ ").unwrap();
        let t = &p.tree;
        assert_eq!(t.len(), 3);
        assert_eq!(t.nodes[0].attr("cwd"), Some("~/docs"));
        assert_eq!(t.nodes[0].attr("idle"), Some("true"));
        assert_eq!(
            (t.nodes[2].role.as_str(), t.nodes[2].key.value.as_str()),
            ("prompt", "2")
        );
        assert!(Terminal.detect("total 0\nuser@sandbox:~/docs$ ") > 0.5);
        assert!(Terminal.detect("just text") < 0.1);
    }
}
