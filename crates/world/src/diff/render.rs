//! The readable form of a [`StateDiff`]: one line per change (what `agentworld diff` prints).
//!
//! ```text
//! ~ doc    rotation: "0" -> "1"
//! - remove TextView #/0/3 "Old" from #/0[3]
//! + insert Button #ok "OK" under #dialog[2] (3 nodes)
//! > move   TextView #item3 "Third" from #list[2] to #list[0]
//! ~ text   EditText #search: "" -> "weather"
//! ~ name   ImageView #/0/1: "Play" -> "Pause"
//! ~ attr   Switch #wifi checked: (none) -> "true"
//! ```
//!
//! A node is `role #key "label"` (the label is the name, else the text, cut at 60 characters;
//! left out when both are empty). A place is `#parent[index]`, or `top[index]` at the top level.
//! Values are quoted with `\n`, `\"` escapes and cut at 200 characters; `(none)` is an absent
//! attribute.

use std::fmt;

use super::{Change, NodeRef, Place, StateDiff, TextField};
use crate::state::tree::quote;

/// Labels are cut to this many characters.
const LABEL: usize = 60;
/// Changed values are cut to this many characters.
const VALUE: usize = 200;

/// `s` quoted, cut to `max` characters (an ellipsis marks the cut).
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => quote(&format!("{}…", &s[..at])),
        None => quote(s),
    }
}

fn opt(v: &Option<String>) -> String {
    v.as_deref().map_or("(none)".to_string(), |v| cut(v, VALUE))
}

/// `role #key`.
fn short(n: &NodeRef) -> String {
    let role = if n.role.is_empty() { "?" } else { &n.role };
    format!("{role} #{}", n.key)
}

/// `role #key "label"`.
fn long(n: &NodeRef) -> String {
    let label = if n.name.is_empty() { &n.text } else { &n.name };
    if label.is_empty() {
        short(n)
    } else {
        format!("{} {}", short(n), cut(label, LABEL))
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.parent {
            Some(p) => write!(f, "#{p}[{}]", self.index),
            None => write!(f, "top[{}]", self.index),
        }
    }
}

fn size(n: usize) -> String {
    if n > 1 {
        format!(" ({n} nodes)")
    } else {
        String::new()
    }
}

impl fmt::Display for Change {
    /// One line, without a newline (see the module docs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Inserted { node, at, size: n } => {
                write!(f, "+ insert {} under {at}{}", long(node), size(*n))
            }
            Change::Removed { node, at, size: n } => {
                write!(f, "- remove {} from {at}{}", long(node), size(*n))
            }
            Change::Moved { node, from, to } => {
                write!(f, "> move   {} from {from} to {to}", long(node))
            }
            Change::TextChanged {
                node,
                field,
                before,
                after,
            } => {
                let what = match field {
                    TextField::Text => "text",
                    TextField::Name => "name",
                };
                write!(
                    f,
                    "~ {what}   {}: {} -> {}",
                    short(node),
                    cut(before, VALUE),
                    cut(after, VALUE)
                )
            }
            Change::AttributeChanged {
                node,
                name,
                before,
                after,
            } => write!(
                f,
                "~ attr   {} {name}: {} -> {}",
                short(node),
                opt(before),
                opt(after)
            ),
            Change::DocumentChanged {
                name,
                before,
                after,
            } => write!(f, "~ doc    {name}: {} -> {}", opt(before), opt(after)),
        }
    }
}

/// See [`StateDiff::render`].
pub(super) fn render(diff: &StateDiff) -> String {
    diff.changes.iter().map(|c| format!("{c}\n")).collect()
}

/// See [`StateDiff::summary`].
pub(super) fn summary(diff: &StateDiff) -> String {
    let mut n = [0usize; 6];
    for c in &diff.changes {
        n[match c {
            Change::Inserted { .. } => 0,
            Change::Removed { .. } => 1,
            Change::Moved { .. } => 2,
            Change::TextChanged { .. } => 3,
            Change::AttributeChanged { .. } => 4,
            Change::DocumentChanged { .. } => 5,
        }] += 1;
    }
    format!(
        "{} inserted, {} removed, {} moved, {} text, {} attribute, {} document",
        n[0], n[1], n[2], n[3], n[4], n[5]
    )
}
