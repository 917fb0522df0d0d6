//! `mind2web`: Mind2Web / SeeAct candidate elements, short snippets of cleaned HTML cut at a
//! fixed length, so tags are left open and a snippet may end inside a tag:
//!
//! ```text
//! A. None of the above
//! B. <button id=0 book a reservation. toggle open> <span> Book a
//! C. <select id=1 type> <option reservations true> Dine in </option> <option
//! ```
//!
//! Lines `X. …` or `(X) …` (X one or two capital letters) are candidates: one top-level node
//! each (role `candidate`, key = the letter as [`KeyKind::ElementId`], name = the text when the
//! candidate is not markup, such as `None of the above`), with the snippet's nodes as children.
//! When there is no candidate line, every line holding markup is read as a fragment at top
//! level (Mind2Web's cleaned page HTML); lines of plain prose are skipped with one warning.
//!
//! Snippets are read by a small forgiving tag reader (cleaned HTML is not HTML: attribute
//! names are dropped and only values remain): an element per start tag, role = the tag name
//! lower-cased, key = its `id=` ([`KeyKind::ElementId`]), attributes = `name=value` pairs,
//! name = the bare words in the tag joined by spaces (Mind2Web's attribute values); text runs
//! are `#text` children (whitespace collapsed). An end tag closes up to its open element
//! (a stray one is ignored, with a warning); void elements and `/>` do not open. Elements
//! left open at the end of a snippet are closed, and a tag cut short keeps what was read,
//! each with a warning.

use super::super::read::{LineIndex, clip, lines_with_offsets};
use crate::Result;
use crate::state::{KeyKind, NodeKey, ParsedState, StateNode, StateParser, TreeBuilder, Warning};

/// The `mind2web` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mind2Web;

const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// `B. rest` or `(B) rest` → (letter, rest).
fn candidate(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let (letter, rest) = if let Some(r) = t.strip_prefix('(') {
        r.split_once(')')?
    } else {
        t.split_once('.')?
    };
    let ok = (1..=2).contains(&letter.len()) && letter.chars().all(|c| c.is_ascii_uppercase());
    (ok && rest.starts_with(' ')).then(|| (letter, rest.trim()))
}

fn has_markup(s: &str) -> bool {
    s.match_indices('<')
        .any(|(i, _)| s[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/'))
}

impl StateParser for Mind2Web {
    fn name(&self) -> &'static str {
        "mind2web"
    }

    fn description(&self) -> &'static str {
        "Mind2Web / SeeAct candidates: `B. <button id=0 book a reservation> <span> Book a` (cut, unbalanced HTML)"
    }

    /// 0.9 when at least two lines are candidates holding markup or `None of the above`;
    /// 0.5 for cleaned HTML (unquoted `id=N` inside tags); else 0.
    fn detect(&self, text: &str) -> f32 {
        let h = super::head(text, 16384);
        let candidates = h
            .lines()
            .filter_map(candidate)
            .filter(|(_, rest)| has_markup(rest) || rest.contains("None of the above"))
            .count();
        if candidates >= 2 {
            return 0.9;
        }
        let cleaned = h
            .match_indices(" id=")
            .any(|(i, _)| h[i + 4..].starts_with(|c: char| c.is_ascii_digit()));
        if cleaned && has_markup(h) { 0.5 } else { 0.0 }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let ix = LineIndex::new(text);
        let mut warnings = Vec::new();
        let mut b = TreeBuilder::new(self.name());
        let any_candidate = text.lines().any(|l| candidate(l).is_some());
        let mut prose = 0usize;
        for (at, line) in lines_with_offsets(text) {
            if line.trim().is_empty() {
                continue;
            }
            let line_no = ix.line(at);
            match candidate(line).filter(|_| any_candidate) {
                Some((letter, rest)) => {
                    let markup = has_markup(rest);
                    b.open(StateNode {
                        name: if markup {
                            String::new()
                        } else {
                            rest.to_string()
                        },
                        key: NodeKey::new(KeyKind::ElementId, letter),
                        line: line_no,
                        ..StateNode::new("candidate")
                    });
                    if markup {
                        let start = at
                            + (line.len() - line.trim_start().len())
                            + line.trim_start().find(rest).unwrap_or(0);
                        fragment(rest, start, &ix, &mut b, &mut warnings);
                    }
                    b.close();
                }
                None if has_markup(line) => fragment(line, at, &ix, &mut b, &mut warnings),
                None => prose += 1,
            }
        }
        if prose > 0 {
            warnings.push(Warning::at_start(format!(
                "{prose} line(s) without markup or a candidate skipped"
            )));
        }
        ParsedState::new(b.finish(), warnings, text, "no candidate or markup")
    }
}

/// Reads one snippet (`s` starts at byte `base` of the text) under the builder's open node.
fn fragment(
    s: &str,
    base: usize,
    ix: &LineIndex<'_>,
    b: &mut TreeBuilder,
    warnings: &mut Vec<Warning>,
) {
    let floor = b.depth();
    let mut open: Vec<String> = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        let next = s[pos..]
            .match_indices('<')
            .find(|(i, _)| {
                s[pos + i + 1..]
                    .starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!')
            })
            .map_or(s.len(), |(i, _)| pos + i);
        let run = collapse(&s[pos..next]);
        if !run.is_empty() {
            b.leaf(StateNode {
                text: run,
                line: ix.line(base + pos),
                ..StateNode::new("#text")
            });
        }
        if next >= s.len() {
            break;
        }
        let tag_start = next;
        let close = s[next..].find('>').map(|i| next + i);
        let inner = &s[next + 1..close.unwrap_or(s.len())];
        pos = close.map_or(s.len(), |c| c + 1);
        if let Some(name) = inner.strip_prefix('/') {
            let name = name.trim().to_ascii_lowercase();
            match open.iter().rposition(|o| *o == name) {
                Some(k) => {
                    for _ in k..open.len() {
                        b.close();
                    }
                    open.truncate(k);
                }
                None => warnings.push(ix.warning(
                    base + tag_start,
                    format!("stray end tag </{}> ignored", clip(&name)),
                )),
            }
            continue;
        }
        if inner.starts_with("!--") {
            if !inner.ends_with("--") && close.is_some() {
                pos = s[tag_start..]
                    .find("-->")
                    .map_or(s.len(), |i| tag_start + i + 3);
            }
            continue;
        }
        if inner.starts_with('!') {
            continue;
        }
        if close.is_none() {
            warnings.push(ix.warning(base + tag_start, "tag cut short; what was read is kept"));
        }
        let self_closing = inner.trim_end().ends_with('/');
        let (node, name) = element(
            inner.trim_end().trim_end_matches('/'),
            ix.line(base + tag_start),
        );
        if self_closing || VOID.contains(&name.as_str()) || close.is_none() {
            b.leaf(node);
        } else {
            b.open(node);
            open.push(name);
        }
    }
    if !open.is_empty() {
        warnings.push(ix.warning(
            base + s.len(),
            format!(
                "snippet ends with {} element(s) open (cut short); closed",
                open.len()
            ),
        ));
    }
    while b.depth() > floor {
        b.close();
    }
}

/// An element from a start tag's inside (`button id=0 book a reservation`).
fn element(inner: &str, line: usize) -> (StateNode, String) {
    let name_end = inner.find(char::is_whitespace).unwrap_or(inner.len());
    let name = inner[..name_end].to_ascii_lowercase();
    let mut node = StateNode {
        line,
        ..StateNode::new(name.clone())
    };
    let mut words: Vec<String> = Vec::new();
    let mut s = inner[name_end..].trim_start();
    while !s.is_empty() {
        let end = s
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(s.len());
        let word = &s[..end];
        let after = s[end..].trim_start();
        if let Some(v) = after.strip_prefix('=') {
            let v = v.trim_start();
            let (value, rest) = match v.chars().next() {
                Some(q @ ('"' | '\'')) => match v[1..].find(q) {
                    Some(e) => (&v[1..1 + e], &v[e + 2..]),
                    None => (&v[1..], ""),
                },
                _ => {
                    let e = v.find(char::is_whitespace).unwrap_or(v.len());
                    (&v[..e], &v[e..])
                }
            };
            if word == "id" && node.key.is_unset() && !value.is_empty() {
                node.key = NodeKey::new(KeyKind::ElementId, value);
            }
            node.attributes.push((word.to_string(), value.to_string()));
            s = rest.trim_start();
        } else {
            if !word.is_empty() {
                words.push(word.to_string());
            }
            s = if end == 0 {
                &after[after.len().min(1)..]
            } else {
                after
            };
        }
    }
    node.name = words.join(" ");
    (node, name)
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates() {
        let text = "What should be the next action?\nA. None of the above\nB. <button id=0 book a reservation. toggle open> <span> Book a\nC. <select id=1 type> <option reservations true> Dine in </option> <option\nD. <div id=2> <p> Celebrating </b> women";
        let p = Mind2Web.parse(text).unwrap();
        let t = &p.tree;
        t.check().unwrap();
        let cands = t.top_level();
        assert_eq!(cands.len(), 4);
        assert_eq!(t.nodes[cands[0]].name, "None of the above");
        let button = t.find_key("0")[0];
        assert_eq!(
            (t.nodes[button].role.as_str(), t.nodes[button].name.as_str()),
            ("button", "book a reservation. toggle open")
        );
        assert_eq!(t.nodes[button].parent, Some(cands[1]));
        assert_eq!(t.find_text("Book a").map(|i| t.nodes[i].depth), Some(3));
        let options = t.find_role("option");
        assert_eq!(options.len(), 2);
        assert_eq!(t.nodes[options[0]].name, "reservations true");
        let msgs: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
        assert!(msgs.iter().any(|m| m.contains("tag cut short")), "{msgs:?}");
        assert!(
            msgs.iter().any(|m| m.contains("stray end tag </b>")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("1 line(s) without markup")),
            "{msgs:?}"
        );
        assert!(Mind2Web.detect(text) > 0.8);
    }

    #[test]
    fn cleaned_page_without_candidates() {
        let p = Mind2Web.parse("<html> <div> <a id=5 href=\"/x y\" tock home page /> <input id=6 search text> </div>").unwrap();
        let t = &p.tree;
        let a = t.find_key("5")[0];
        assert_eq!(t.nodes[a].attr("href"), Some("/x y"));
        assert_eq!(t.nodes[a].name, "tock home page");
        assert_eq!(t.nodes[t.find_key("6")[0]].depth, 2);
    }
}
