//! Structural diff between two states of one format ([`diff`]), and a line diff for text
//! states such as terminal screens and JSON tool results ([`line_diff`]), and the observation
//! patches a patch-form world model writes ([`write_patch`], [`apply_patch`]).
//!
//! The structural diff works on the common [`StateTree`], so it is the same for every format.
//! It pairs the nodes of the two trees, then reports what differs between partners and what
//! has none:
//!
//! 1. **Ids.** Nodes with an id key (resource-id, bid, element id, accessible id: any
//!    [`KeyKind`] but [`KeyKind::Path`]) that occurs exactly once in each tree are partners,
//!    wherever they are. An id that occurs more than once in either tree is reported in
//!    [`StateDiff::warnings`], and its nodes are paired by position (below), only ever with a
//!    node of the same id.
//! 2. **Position.** Starting from the top level and from every pair found, the unpaired
//!    children of two partners are aligned: equal subtrees along the longest common
//!    subsequence (so an insertion does not shift the rest), then, in each stretch between
//!    those, the k-th sibling of a role with the k-th of the same role, then what is left by a
//!    unique equal subtree, (role, name) or (role, text) among the siblings. A node with an id
//!    only pairs with a node of the same id; a node without one only with a node without one.
//! 3. **Similarity.** Unpaired nodes whose parents are paired (a subtree that left one parent
//!    and appeared under another) are paired across the whole trees by a unique equal subtree
//!    (holding some name or text), then a unique (role, name), then (role, text); their
//!    children are then aligned as in 2.
//!
//! Changes ([`Change`]), in this order: document attributes; removed subtrees (one change per
//! subtree, with its size) in before order; then, walking the after tree in order, for each
//! node: inserted (one per subtree), or moved (its partner's parent is not its parent's
//! partner, or it left the order of its siblings that stayed: the siblings outside the longest
//! run that kept their order), then name and text changes, then role, bounds and attribute
//! changes. Bounds are reported as the attribute `bounds` (`[l,t][r,b]`, absent when the
//! format gives none) and a changed role (possible only between id-keyed partners) as the
//! attribute `role`.
//!
//! Nothing here recurses: trees are flat arrays, so an 80- or 10,000-level tree is as safe as
//! a flat one. With the `native` feature, sequence alignment that runs past a few seconds falls
//! back to a coarser (still correct, no longer minimal) alignment.

mod lines;
mod matching;
mod patch;
mod render;
mod score;

pub use lines::{LineChange, LineOp, line_diff, render_lines};
pub use patch::{
    NO_CHANGE, ObservationForm, PatchKind, Patched, WHOLE_STATE, apply_patch, write_patch,
};
pub use score::{NodeF1, line_f1, node_f1};

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::state::{KeyKind, StateNode, StateTree};
use matching::{Matching, Side, longest_increasing};

/// Which text field of a node changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextField {
    /// The visible text ([`StateNode::text`](crate::state::StateNode::text)).
    Text,
    /// The accessible name or label ([`StateNode::name`](crate::state::StateNode::name)).
    Name,
}

/// A node as a change names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRef {
    /// The node's key value: its id, or its positional path (in the before tree when the
    /// node is there, else in the after tree).
    pub key: String,
    /// Where the key came from.
    pub key_kind: KeyKind,
    /// The role (of the after node when there is one).
    pub role: String,
    /// The name (of the after node when there is one).
    pub name: String,
    /// The text (of the after node when there is one).
    pub text: String,
    /// Index of the node in the before tree's `nodes`, when it is there.
    pub before: Option<usize>,
    /// Index of the node in the after tree's `nodes`, when it is there.
    pub after: Option<usize>,
}

/// Where a node sits: under which parent, at which child position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The parent's key value in that tree; `None` at the top level.
    pub parent: Option<String>,
    /// 0-based position among the parent's children (or the top-level nodes).
    pub index: usize,
}

/// One difference between two states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Change {
    /// A subtree that only the after state has.
    Inserted {
        /// Its root.
        node: NodeRef,
        /// Where it is in the after tree.
        at: Place,
        /// Nodes in the subtree that are new (the root included).
        size: usize,
    },
    /// A subtree that only the before state has.
    Removed {
        /// Its root.
        node: NodeRef,
        /// Where it was in the before tree.
        at: Place,
        /// Nodes in the subtree that are gone (the root included).
        size: usize,
    },
    /// A node (with its subtree) under another parent, or out of order among its siblings.
    Moved {
        /// The node.
        node: NodeRef,
        /// Where it was in the before tree.
        from: Place,
        /// Where it is in the after tree.
        to: Place,
    },
    /// A node's text or name changed.
    TextChanged {
        /// The node.
        node: NodeRef,
        /// Which field.
        field: TextField,
        /// The value before.
        before: String,
        /// The value after.
        after: String,
    },
    /// A node's attribute, bounds (`bounds`) or role (`role`) changed, appeared or went away.
    AttributeChanged {
        /// The node.
        node: NodeRef,
        /// The attribute's name.
        name: String,
        /// The value before (`None`: absent).
        before: Option<String>,
        /// The value after (`None`: absent).
        after: Option<String>,
    },
    /// A document-level attribute ([`StateTree::attributes`]) changed, appeared or went away.
    DocumentChanged {
        /// The attribute's name.
        name: String,
        /// The value before (`None`: absent).
        before: Option<String>,
        /// The value after (`None`: absent).
        after: Option<String>,
    },
}

/// The differences between two states, see [`diff`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateDiff {
    /// The changes, in the order the module docs give.
    pub changes: Vec<Change>,
    /// What the diff could not do cleanly (duplicate keys matched by position, trees of two
    /// formats).
    pub warnings: Vec<String>,
}

impl StateDiff {
    /// Whether the states are the same.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// One line per change (see [`Change`]'s `Display`), each ending in a newline.
    pub fn render(&self) -> String {
        render::render(self)
    }

    /// Counts by kind: `2 inserted, 1 removed, 0 moved, 3 text, 1 attribute, 0 document`.
    pub fn summary(&self) -> String {
        render::summary(self)
    }
}

/// The structural diff from `before` to `after` (see the module docs for the rules). Never
/// fails and never panics: trees of two formats are compared all the same, with a warning.
pub fn diff(before: &StateTree, after: &StateTree) -> StateDiff {
    let m = Matching::new(before, after, deadline());
    let mut out = StateDiff {
        changes: Vec::new(),
        warnings: m.warnings.clone(),
    };
    if before.format != after.format {
        out.warnings.insert(
            0,
            format!(
                "the states are in two formats ({} and {}); compared all the same",
                before.format, after.format
            ),
        );
    }
    attribute_changes(&before.attributes, &after.attributes, |name, b, a| {
        out.changes.push(Change::DocumentChanged {
            name,
            before: b,
            after: a,
        })
    });
    removed(&m, &mut out.changes);
    for (j, reordered) in reordered(&m).into_iter().enumerate() {
        match m.back[j] {
            None => {
                if m.b.parent[j].is_none_or(|p| m.back[p].is_some()) {
                    out.changes.push(Change::Inserted {
                        node: node_ref(&m, None, Some(j)),
                        at: place(&m.b, j),
                        size: unmatched_size(&m.b, &m.back, j),
                    });
                }
            }
            Some(i) => pair_changes(&m, i, j, reordered, &mut out.changes),
        }
    }
    out
}

/// Alignment stops looking for the best alignment after this (native builds; wasm has no
/// clock).
#[cfg(feature = "native")]
fn deadline() -> Option<std::time::Instant> {
    Some(std::time::Instant::now() + std::time::Duration::from_secs(5))
}

#[cfg(not(feature = "native"))]
fn deadline() -> Option<std::time::Instant> {
    None
}

fn node_ref(m: &Matching, i: Option<usize>, j: Option<usize>) -> NodeRef {
    let before = i.map(|i| &m.a.tree.nodes[i]);
    let after = j.map(|j| &m.b.tree.nodes[j]);
    let key = before.or(after).map(|n| n.key.clone()).unwrap_or_default();
    let shown = after.or(before);
    let field = |f: fn(&StateNode) -> &String| shown.map(f).cloned().unwrap_or_default();
    NodeRef {
        key: key.value,
        key_kind: key.kind,
        role: field(|n| &n.role),
        name: field(|n| &n.name),
        text: field(|n| &n.text),
        before: i,
        after: j,
    }
}

fn place(side: &Side, i: usize) -> Place {
    Place {
        parent: side.parent[i].map(|p| side.tree.nodes[p].key.value.clone()),
        index: side.pos[i],
    }
}

/// Nodes of `i`'s subtree that have no partner, counting those under a partnered descendant
/// out (they are reported on their own).
fn unmatched_size(side: &Side, own: &[Option<usize>], i: usize) -> usize {
    let end = side.tree.subtree_end(i);
    // owned[k - i]: node k is reported with i.
    let mut owned = vec![false; end - i];
    owned[0] = true;
    for k in i + 1..end {
        owned[k - i] = own[k].is_none() && side.parent[k].is_some_and(|p| p >= i && owned[p - i]);
    }
    owned.iter().filter(|&&o| o).count()
}

fn removed(m: &Matching, out: &mut Vec<Change>) {
    for i in 0..m.a.tree.len() {
        if m.fwd[i].is_none() && m.a.parent[i].is_none_or(|p| m.fwd[p].is_some()) {
            out.push(Change::Removed {
                node: node_ref(m, Some(i), None),
                at: place(&m.a, i),
                size: unmatched_size(&m.a, &m.fwd, i),
            });
        }
    }
}

/// For each after node: whether it stayed under its parent's partner but left the order of
/// its siblings that did the same.
fn reordered(m: &Matching) -> Vec<bool> {
    let mut out = vec![false; m.b.tree.len()];
    let parents = std::iter::once(None).chain((0..m.b.tree.len()).map(Some));
    for pb in parents {
        if pb.is_some_and(|p| m.back[p].is_none()) {
            continue;
        }
        let pa = pb.and_then(|p| m.back[p]);
        let stayed: Vec<(usize, usize)> = (m.b.children(pb).iter())
            .filter_map(|&j| m.back[j].map(|i| (j, i)))
            .filter(|&(_, i)| m.a.parent[i] == pa)
            .collect();
        let order: Vec<usize> = stayed.iter().map(|&(_, i)| m.a.pos[i]).collect();
        for (keep, (j, _)) in longest_increasing(&order).into_iter().zip(stayed) {
            out[j] = !keep;
        }
    }
    out
}

fn pair_changes(m: &Matching, i: usize, j: usize, reordered: bool, out: &mut Vec<Change>) {
    let (a, b) = (&m.a.tree.nodes[i], &m.b.tree.nodes[j]);
    let node = || node_ref(m, Some(i), Some(j));
    let parent_moved = m.a.parent[i].and_then(|p| m.fwd[p]) != m.b.parent[j]
        || m.a.parent[i].is_some() != m.b.parent[j].is_some();
    if parent_moved || reordered {
        out.push(Change::Moved {
            node: node(),
            from: place(&m.a, i),
            to: place(&m.b, j),
        });
    }
    for (field, x, y) in [
        (TextField::Name, &a.name, &b.name),
        (TextField::Text, &a.text, &b.text),
    ] {
        if x != y {
            out.push(Change::TextChanged {
                node: node(),
                field,
                before: x.clone(),
                after: y.clone(),
            });
        }
    }
    let mut attrs = |name: String, before, after| {
        out.push(Change::AttributeChanged {
            node: node(),
            name,
            before,
            after,
        })
    };
    if a.role != b.role {
        attrs("role".into(), Some(a.role.clone()), Some(b.role.clone()));
    }
    if a.bounds != b.bounds {
        attrs(
            "bounds".into(),
            a.bounds.map(|r| r.to_string()),
            b.bounds.map(|r| r.to_string()),
        );
    }
    attribute_changes(&a.attributes, &b.attributes, attrs);
}

/// Calls `report(name, before, after)` for each attribute whose (first) value differs, in the
/// before order, then the ones only `after` has, in its order.
fn attribute_changes(
    before: &[(String, String)],
    after: &[(String, String)],
    mut report: impl FnMut(String, Option<String>, Option<String>),
) {
    let mut values: HashMap<&str, (Option<&String>, Option<&String>)> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (side, list) in [(0, before), (1, after)] {
        for (k, v) in list {
            let e = values.entry(k.as_str()).or_insert_with(|| {
                order.push(k);
                (None, None)
            });
            let slot = if side == 0 { &mut e.0 } else { &mut e.1 };
            slot.get_or_insert(v);
        }
    }
    for k in order {
        let (b, a) = values[k];
        if b != a {
            report(k.to_string(), b.cloned(), a.cloned());
        }
    }
}

#[cfg(test)]
mod tests;
