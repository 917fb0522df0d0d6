//! `axtree`: the accessibility-tree text WebArena and BrowserGym show a model, one node per line,
//! indented by depth (a tab per level; spaces are read too, the first indented line setting the
//! width):
//!
//! ```text
//! RootWebArea 'Example Domain', focused
//! \t[13] heading 'Example Domain'
//! \t\tStaticText 'Example Domain'
//! \t[a15] link 'More information...', clickable, visible, box="(10,20,110,40)"
//! [1] RootWebArea 'Tickets' focused: True
//! \t[5] textbox 'Name' required: False
//! ```
//!
//! A line is `[bid] role 'name'` (the bracketed id optional: BrowserGym's `StaticText` has
//! none; the name a Python string literal, either quote, possibly absent), then properties:
//! BrowserGym's comma-separated `, focused`, `, expanded=False`, `, value='…'`, `, clickable`,
//! or WebArena's space-separated `focused: True`, `url: http://…`. Role = the role, name = the
//! name (for `StaticText`, `LineBreak`-like text roles the name is the text: it goes to `text`),
//! key = the bid ([`KeyKind::Bid`]) or the positional path. A bid with a letter prefix
//! (`a15`, BrowserGym's frame prefix) gets the attribute `frame` = the prefix. Properties are
//! attributes in order (a bare property is `true`); `box="(l,t,r,b)"` gives the bounds and
//! `center`, `value` stay attributes. Header lines (`Tab 0 (current): …`, `URL: …`) before the
//! tree become document attributes; other lines that cannot be read are skipped with a warning.
//! An indentation jump of more than one level is clamped (with a warning).

use super::super::read::pyrepr;
use super::super::read::{LineIndex, clip, lines_with_offsets};
use crate::Result;
use crate::state::{KeyKind, NodeKey, ParsedState, Rect, StateNode, StateParser, TreeBuilder};

/// The `axtree` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct AxTree;

/// Roles whose name is their text.
const TEXT_ROLES: [&str; 3] = ["StaticText", "InlineTextBox", "text"];

/// A parsed line: (bid, role, name, rest after the name).
fn split_line(line: &str) -> Option<(Option<&str>, &str, Option<String>, &str)> {
    let mut s = line.trim();
    let mut bid = None;
    if let Some(rest) = s.strip_prefix('[') {
        let (id, rest) = rest.split_once(']')?;
        if id.is_empty() || id.contains(char::is_whitespace) {
            return None;
        }
        bid = Some(id);
        s = rest.trim_start();
    }
    let role_end = s.find(char::is_whitespace).unwrap_or(s.len());
    let role = s[..role_end].trim_end_matches(',');
    if role.is_empty()
        || !role
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return None;
    }
    let rest = s[role_end..].trim_start();
    match pyrepr::read_str(rest) {
        Some(p) => Some((bid, role, Some(p.value), &rest[p.len..])),
        None => Some((bid, role, None, rest)),
    }
}

impl StateParser for AxTree {
    fn name(&self) -> &'static str {
        "axtree"
    }

    fn description(&self) -> &'static str {
        "WebArena / BrowserGym accessibility tree: `\\t[12] link 'More', clickable` lines indented by depth"
    }

    /// 0.9 × the fraction of lines of the form `[bid] role 'name'` / `role 'name'` (a quoted
    /// name is required for the line to count).
    fn detect(&self, text: &str) -> f32 {
        let f = super::line_fraction(text, is_header, |l| {
            split_line(l).is_some_and(|(_, _, name, _)| name.is_some())
        });
        if f < 0.3 { 0.0 } else { 0.9 * f }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let ix = LineIndex::new(text);
        let mut warnings = Vec::new();
        let mut b = TreeBuilder::new(self.name());
        let mut unit = 0usize;
        for (at, line) in lines_with_offsets(text) {
            if line.trim().is_empty() {
                continue;
            }
            let lead = &line[..line.len() - line.trim_start().len()];
            let Some((bid, role, Some(name), rest)) = split_line(line) else {
                if b.is_empty() && is_header(line) {
                    if let Some((k, v)) = line.split_once(':') {
                        b.doc_attr(k.trim(), v.trim());
                    }
                } else {
                    warnings.push(ix.warning(
                        at,
                        format!("not a tree line, skipped: {:?}", clip(line.trim())),
                    ));
                }
                continue;
            };
            let tabs = lead.chars().filter(|&c| c == '\t').count();
            let spaces = lead.chars().filter(|&c| c == ' ').count();
            if spaces > 0 && unit == 0 {
                unit = spaces;
            }
            let depth = tabs + spaces.checked_div(unit).unwrap_or(0);
            let mut node = StateNode {
                role: role.to_string(),
                line: ix.line(at),
                ..StateNode::default()
            };
            if TEXT_ROLES.contains(&role) {
                node.text = name;
            } else {
                node.name = name;
            }
            if let Some(bid) = bid {
                let prefix: String = bid
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                if !prefix.is_empty() && prefix.len() < bid.len() {
                    node.attributes.push(("frame".into(), prefix));
                }
                node.key = NodeKey::new(KeyKind::Bid, bid);
            }
            properties(rest, &mut node);
            let (_, got) = b.push_at(depth, node);
            if got < depth {
                warnings.push(ix.warning(
                    at,
                    format!("indentation jumps to depth {depth}; read at depth {got}"),
                ));
            }
        }
        ParsedState::new(b.finish(), warnings, text, "no tree line")
    }
}

/// `Tab 0 (current): Title`, `URL: http://…`, `OBJECTIVE: …` lines around a tree.
fn is_header(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("Tab ")
        || t.split_once(':').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_uppercase() || c == ' ' || c == '_')
        })
}

/// Properties after the name, in either style.
fn properties(rest: &str, node: &mut StateNode) {
    let mut s = rest;
    loop {
        s = s.trim_start_matches([',', ' ', '\t']);
        if s.is_empty() {
            break;
        }
        let end_word = s
            .find(|c: char| c == '=' || c == ',' || c == ':' || c.is_whitespace())
            .unwrap_or(s.len());
        if end_word == 0 {
            // A stray `=` or `:`.
            s = &s[1..];
            continue;
        }
        let key = &s[..end_word];
        let after = &s[end_word..];
        let (value, remaining) = if let Some(v) = after.strip_prefix('=') {
            match pyrepr::read_str(v) {
                Some(p) => (p.value, &v[p.len..]),
                None => {
                    let end = v.find(',').unwrap_or(v.len());
                    (v[..end].trim().to_string(), &v[end..])
                }
            }
        } else if let Some(v) = after.strip_prefix(": ") {
            // WebArena: the value runs to the next ` word: ` or the end.
            let next = next_webarena_key(v);
            (v[..next].trim().to_string(), &v[next..])
        } else {
            ("true".to_string(), after)
        };
        if key == "box" {
            let nums: Vec<i32> = value
                .trim_matches(['(', ')'])
                .split(',')
                .filter_map(|x| x.trim().parse::<f64>().ok())
                .map(|x| x.round() as i32)
                .collect();
            if let [l, t, r, b] = nums[..] {
                node.bounds = Some(Rect::from_corners(l, t, r, b));
            }
        }
        node.attributes.push((key.to_string(), value));
        s = remaining;
    }
}

/// Where the next WebArena `key: ` starts in `v` (or its length).
fn next_webarena_key(v: &str) -> usize {
    let mut from = 0;
    while let Some(sp) = v[from..].find(' ') {
        let at = from + sp + 1;
        let word_end = v[at..].find(": ").map(|e| at + e);
        if let Some(e) = word_end
            && e > at
            && v[at..e]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return at - 1;
        }
        from = at;
    }
    v.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsergym_lines() {
        let text = "RootWebArea 'Example', focused\n\t[13] heading 'Example Domain'\n\t\tStaticText 'Example Domain'\n\t[a15] link \"It's more\", clickable, expanded=False, value='x y', box=\"(10,20,110,40)\"\n";
        let p = AxTree.parse(text).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.tree;
        let shape: Vec<_> = t
            .nodes
            .iter()
            .map(|n| (n.depth, n.role.as_str(), n.key.value.as_str()))
            .collect();
        assert_eq!(
            shape,
            [
                (0, "RootWebArea", "/0"),
                (1, "heading", "13"),
                (2, "StaticText", "/0/0/0"),
                (1, "link", "a15")
            ]
        );
        assert_eq!(t.nodes[0].attr("focused"), Some("true"));
        assert_eq!(t.nodes[2].text, "Example Domain");
        let link = &t.nodes[3];
        assert_eq!(link.name, "It's more");
        assert_eq!(
            link.attributes,
            [
                ("frame", "a"),
                ("clickable", "true"),
                ("expanded", "False"),
                ("value", "x y"),
                ("box", "(10,20,110,40)")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(link.bounds, Some(Rect::from_corners(10, 20, 110, 40)));
        assert!(AxTree.detect(text) > 0.8);
    }

    #[test]
    fn webarena_lines() {
        let text = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[5] link 'Home' url: http://shop.test/ a b\n\t[6] textbox 'Search' required: False focused: True\n\t\t[7] StaticText ''\n garbage (line\n";
        let p = AxTree.parse(text).unwrap();
        let t = &p.tree;
        assert_eq!(
            t.attributes[0],
            ("Tab 0 (current)".to_string(), "Shop".to_string())
        );
        assert_eq!(t.len(), 4);
        assert_eq!(t.nodes[1].attr("url"), Some("http://shop.test/ a b"));
        assert_eq!(t.nodes[2].attributes.len(), 2);
        assert_eq!(t.nodes[2].attr("focused"), Some("True"));
        assert_eq!(p.warnings.len(), 1);
    }
}
