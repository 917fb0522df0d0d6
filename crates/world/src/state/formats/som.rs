//! `som`: VisualWebArena's Set-of-Marks observation text, one element per line:
//!
//! ```text
//! [31] [IMG] [Image, description: hp fx-7010dn fax machine, url: http://…]
//! [] [StaticText] [[homemade] Obligatory Halloween Pumpkin Loaf!\tSubmitted by\tkneechalice]
//! [33] [BUTTON] [Add to Cart]
//! ```
//!
//! `[id] [TAG] [text]`: the id is the mark drawn on the screenshot (empty `[]` for text that
//! cannot be acted on), the text runs from after `] [` to the line's last `]` (it may hold
//! brackets and tabs). The list is flat: every element is a top-level node; role = the tag,
//! text = the text, key = the id ([`KeyKind::ElementId`]) or the positional path for `[]`.
//! Lines such as `URL: …`, `OBJECTIVE: …`, `PREVIOUS ACTION: …` and `OBSERVATION:` (the
//! prompt template around the observation) become document attributes (keys lower-cased);
//! any other line is skipped with a warning, and a line cut before its closing `]` keeps the
//! text read so far (with a warning).

use super::super::read::{LineIndex, clip, lines_with_offsets};
use crate::Result;
use crate::state::{KeyKind, NodeKey, ParsedState, StateNode, StateParser, TreeBuilder};

/// The `som` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct SetOfMarks;

/// `[id] [TAG] [text…` → (id, tag, text, closed).
fn split(line: &str) -> Option<(&str, &str, &str, bool)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (id, rest) = rest.split_once("] [")?;
    if id.contains([' ', '[', ']']) {
        return None;
    }
    let (tag, rest) = rest.split_once("] [")?;
    if tag.is_empty() || tag.contains([' ', '[', ']']) {
        return None;
    }
    let rest = rest.trim_end();
    Some(match rest.strip_suffix(']') {
        Some(text) => (id, tag, text, true),
        None => (id, tag, rest, false),
    })
}

/// `KEY: value` with an upper-case key (`URL`, `PREVIOUS ACTION`).
fn header(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    let ok = !k.trim().is_empty()
        && k.chars()
            .all(|c| c.is_ascii_uppercase() || c == ' ' || c == '_');
    ok.then(|| (k.trim(), v.trim()))
}

impl StateParser for SetOfMarks {
    fn name(&self) -> &'static str {
        "som"
    }

    fn description(&self) -> &'static str {
        "VisualWebArena Set-of-Marks text: `[id] [TAG] [text]` lines, `[]` for plain text"
    }

    /// 0.95 × the fraction of `[id] [TAG] [text]` lines (header lines not counted).
    fn detect(&self, text: &str) -> f32 {
        0.95 * super::line_fraction(text, |l| header(l).is_some(), |l| split(l).is_some())
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let ix = LineIndex::new(text);
        let mut warnings = Vec::new();
        let mut b = TreeBuilder::new(self.name());
        for (at, line) in lines_with_offsets(text) {
            if line.trim().is_empty() {
                continue;
            }
            if let Some((id, tag, body, closed)) = split(line) {
                if !closed {
                    warnings.push(ix.warning(at, "line cut before its closing `]`; text kept"));
                }
                let key = if id.is_empty() {
                    NodeKey::default()
                } else {
                    NodeKey::new(KeyKind::ElementId, id)
                };
                b.leaf(StateNode {
                    text: body.to_string(),
                    key,
                    line: ix.line(at),
                    ..StateNode::new(tag)
                });
            } else if let Some((k, v)) = header(line) {
                b.doc_attr(k.to_lowercase(), v);
            } else {
                warnings.push(ix.warning(
                    at,
                    format!(
                        "not a `[id] [TAG] [text]` line, skipped: {:?}",
                        clip(line.trim())
                    ),
                ));
            }
        }
        ParsedState::new(b.finish(), warnings, text, "no `[id] [TAG] [text]` line")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_headers() {
        let text = "OBSERVATION:\n[] [StaticText] [[I ate] Croissant\tSubmitted by]\n[9] [IMG] []\n[10] [A] [kneechalice]\nURL: http://reddit.com\nstray\n[11] [A] [45 comm";
        let p = SetOfMarks.parse(text).unwrap();
        let t = &p.tree;
        assert_eq!(t.len(), 4);
        assert_eq!(t.nodes[0].text, "[I ate] Croissant\tSubmitted by");
        assert_eq!(t.nodes[0].key.kind, KeyKind::Path);
        assert_eq!(
            (
                t.nodes[1].role.as_str(),
                t.nodes[1].key.value.as_str(),
                t.nodes[1].text.as_str()
            ),
            ("IMG", "9", "")
        );
        assert_eq!(t.nodes[3].text, "45 comm");
        assert_eq!(
            t.attributes[1],
            ("url".to_string(), "http://reddit.com".to_string())
        );
        assert_eq!(p.warnings.len(), 2);
        assert!(SetOfMarks.detect(text) > 0.7);
    }
}
