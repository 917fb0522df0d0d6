//! The readable, indented form of a [`StateTree`] (what `agentworld parse` prints).
//!
//! ```text
//! FrameLayout #/0 [0,0][1080,1794]
//!   TextView #com.app:id/title "Settings" text="Wi-Fi" [42,100][500,160] clickable=true
//! ```
//!
//! One line per node: two spaces per depth level (past depth 40 the indentation stops growing
//! and the line starts with `@depth`), the role, `#key`, the quoted name, `text=` and the
//! quoted text, the bounds, then the attributes as `key=value` (values quoted when they hold
//! spaces, quotes or control characters). Newlines inside values are written `\n`.

use std::fmt::Write;

use super::StateTree;

/// Indentation stops growing here.
const MAX_INDENT: usize = 40;

/// See the module docs.
pub(crate) fn render(tree: &StateTree) -> String {
    let mut out = String::new();
    for n in &tree.nodes {
        let shown = n.depth.min(MAX_INDENT);
        out.extend(std::iter::repeat_n("  ", shown));
        if n.depth > MAX_INDENT {
            let _ = write!(out, "@{} ", n.depth);
        }
        out.push_str(if n.role.is_empty() { "?" } else { &n.role });
        let _ = write!(out, " #{}", bare_or_quoted(&n.key.value));
        if !n.name.is_empty() {
            let _ = write!(out, " {}", quote(&n.name));
        }
        if !n.text.is_empty() {
            let _ = write!(out, " text={}", quote(&n.text));
        }
        if let Some(b) = n.bounds {
            let _ = write!(out, " {b}");
        }
        for (k, v) in &n.attributes {
            let _ = write!(out, " {}={}", bare_or_quoted(k), bare_or_quoted(v));
        }
        out.push('\n');
    }
    out
}

/// `"…"` with `\\ \" \n \r \t` and `\u{HEX}` for other control characters.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn bare_or_quoted(s: &str) -> String {
    let plain = !s.is_empty()
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\');
    if plain { s.to_string() } else { quote(s) }
}

#[cfg(test)]
mod tests {
    use super::super::{KeyKind, NodeKey, Rect, StateNode, TreeBuilder};

    #[test]
    fn lines_and_quoting() {
        let mut b = TreeBuilder::new("t");
        b.open(StateNode {
            name: "Wi-Fi \"on\"".into(),
            bounds: Some(Rect::from_corners(0, 0, 10, 10)),
            key: NodeKey::new(KeyKind::ResourceId, "app:id/wifi"),
            ..StateNode::new("Switch")
        });
        b.leaf(StateNode {
            text: "a\nb".into(),
            attributes: vec![("k".into(), "two words".into()), ("e".into(), "".into())],
            ..StateNode::new("TextView")
        });
        let out = b.finish().outline();
        assert_eq!(
            out,
            "Switch #app:id/wifi \"Wi-Fi \\\"on\\\"\" [0,0][10,10]\n  TextView #/0/0 text=\"a\\nb\" k=\"two words\" e=\"\"\n"
        );
    }

    #[test]
    fn deep_lines_stop_indenting() {
        let mut b = TreeBuilder::new("t");
        for _ in 0..50 {
            b.open(StateNode::new("x"));
        }
        let out = b.finish().outline();
        let last = out.lines().last().unwrap();
        assert!(
            last.starts_with(&format!("{}@49 x", "  ".repeat(40))),
            "{last}"
        );
    }
}
