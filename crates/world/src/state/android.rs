//! Android UI hierarchies: one node tree for uiautomator dumps, Appium page source and the
//! `android-compact` text form.
//!
//! The tree is stored flat, in pre-order, each node carrying its depth ([`AndroidTree::nodes`]).
//! A node's subtree is the run of following nodes that are deeper than it, so every operation
//! (parent, children, subtree copy, insert, remove, drop, clone, compare) is a loop, never a
//! recursion: a 10,000-level-deep dump is as safe as a flat one. The pre-order position is the
//! node index that actions use as a target.

mod compact;
mod compare;
mod node;
mod to_state;
mod xml;
mod xml_write;

pub use compact::{COMPACT_FORMAT, KeptFields, parse_compact, render_compact, render_compact_line};
pub use compare::{FieldMismatches, TreeComparison, compare_trees};
pub use node::{AndroidNode, Bounds, NodeFlags};
pub use xml::{parse_xml, parse_xml_bytes};
pub use xml_write::to_uiautomator_xml;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Which text form a tree was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceFormat {
    /// `uiautomator dump`: `<hierarchy><node class=… …>`.
    Uiautomator,
    /// Appium page source: elements named after their class.
    Appium,
    /// Our `android-compact` text form.
    Compact,
    /// Built in code.
    Built,
}

/// A recoverable oddity met while reading, with where it was (1-based; column in characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// 1-based line.
    pub line: usize,
    /// 1-based column in characters (0 when not known).
    pub column: usize,
    /// What was odd and what was done about it.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// A tree read from text, with the warnings met on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The tree.
    pub tree: AndroidTree,
    /// Recoverable oddities, in input order.
    pub warnings: Vec<Warning>,
}

/// A UI hierarchy: nodes in pre-order with depths. Depth-0 nodes are the top-level windows.
///
/// Methods that take a node index panic when it is out of range, as slice indexing does;
/// user-supplied targets go through [`crate::action::android::Target::resolve`], which checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AndroidTree {
    /// The text form it came from.
    pub source: SourceFormat,
    /// Attributes of the `<hierarchy>` element (`rotation`, Appium's `width`/`height`, …).
    pub root_attributes: Vec<(String, String)>,
    /// The nodes in pre-order; `nodes[0].depth == 0` and each depth is at most one more than
    /// the previous node's.
    pub nodes: Vec<AndroidNode>,
}

impl Default for AndroidTree {
    /// An empty tree built in code.
    fn default() -> Self {
        AndroidTree {
            source: SourceFormat::Built,
            root_attributes: Vec::new(),
            nodes: Vec::new(),
        }
    }
}

impl AndroidTree {
    /// A tree from pre-order nodes, checking the depth invariant.
    pub fn new(nodes: Vec<AndroidNode>) -> Result<Self> {
        let tree = AndroidTree {
            source: SourceFormat::Built,
            root_attributes: Vec::new(),
            nodes,
        };
        tree.check()?;
        Ok(tree)
    }

    /// Checks the depth invariant (see [`AndroidTree::nodes`]).
    pub fn check(&self) -> Result<()> {
        let mut prev: Option<usize> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            let max = prev.map_or(0, |p| p + 1);
            if n.depth > max {
                return Err(Error::Tree(format!(
                    "node {i} has depth {} after depth {prev:?}",
                    n.depth
                )));
            }
            prev = Some(n.depth);
        }
        Ok(())
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// One past the last node of `i`'s subtree.
    pub fn subtree_end(&self, i: usize) -> usize {
        let d = self.nodes[i].depth;
        (i + 1..self.nodes.len())
            .find(|&j| self.nodes[j].depth <= d)
            .unwrap_or(self.nodes.len())
    }

    /// The parent of node `i`, `None` for top-level nodes.
    pub fn parent(&self, i: usize) -> Option<usize> {
        let d = self.nodes[i].depth;
        if d == 0 {
            return None;
        }
        (0..i).rev().find(|&j| self.nodes[j].depth == d - 1)
    }

    /// The ancestors of `i`, nearest first.
    pub fn ancestors(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = i;
        while let Some(p) = self.parent(cur) {
            out.push(p);
            cur = p;
        }
        out
    }

    /// The direct children of `i`, in order.
    pub fn children(&self, i: usize) -> Vec<usize> {
        let d = self.nodes[i].depth;
        let end = self.subtree_end(i);
        (i + 1..end)
            .filter(|&j| self.nodes[j].depth == d + 1)
            .collect()
    }

    /// A copy of `i`'s subtree as a tree of its own (depths re-based to 0).
    pub fn subtree(&self, i: usize) -> AndroidTree {
        let base = self.nodes[i].depth;
        let nodes = self.nodes[i..self.subtree_end(i)]
            .iter()
            .map(|n| AndroidNode {
                depth: n.depth - base,
                ..n.clone()
            })
            .collect();
        AndroidTree {
            source: self.source,
            root_attributes: self.root_attributes.clone(),
            nodes,
        }
    }

    /// Removes `i` and its subtree; returns how many nodes went.
    pub fn remove_subtree(&mut self, i: usize) -> usize {
        let end = self.subtree_end(i);
        self.nodes.drain(i..end);
        end - i
    }

    /// Inserts `sub` (a tree whose top nodes have depth 0) as children of `parent` before its
    /// `position`-th child (appended when past the end), or at top level when `parent` is
    /// `None`. Returns the index of the first inserted node.
    pub fn insert_subtree(
        &mut self,
        parent: Option<usize>,
        position: usize,
        sub: &AndroidTree,
    ) -> usize {
        let (depth, siblings, end) = match parent {
            Some(p) => (
                self.nodes[p].depth + 1,
                self.children(p),
                self.subtree_end(p),
            ),
            None => (0, self.top_level(), self.nodes.len()),
        };
        let at = siblings.get(position).copied().unwrap_or(end);
        let moved = sub.nodes.iter().map(|n| AndroidNode {
            depth: n.depth + depth,
            ..n.clone()
        });
        self.nodes.splice(at..at, moved);
        at
    }

    /// The depth-0 nodes.
    pub fn top_level(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].depth == 0)
            .collect()
    }

    /// Nodes whose [`AndroidNode::short_id`] or full resource-id equals `id` (a leading `#` is ignored).
    pub fn find_by_id(&self, id: &str) -> Vec<usize> {
        let id = id.strip_prefix('#').unwrap_or(id);
        (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                !n.resource_id.is_empty() && (n.resource_id == id || n.short_id() == id)
            })
            .collect()
    }

    /// Nodes whose text, or else content-desc, equals `text`.
    pub fn find_by_text(&self, text: &str) -> Vec<usize> {
        if text.is_empty() {
            return Vec::new();
        }
        let by_text: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].text == text)
            .collect();
        if !by_text.is_empty() {
            return by_text;
        }
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].content_desc == text)
            .collect()
    }

    /// The node a touch at (`x`, `y`) lands on: the last node in pre-order whose bounds contain
    /// the point (the deepest, topmost-drawn one), skipping zero-size bounds.
    pub fn hit_test(&self, x: i32, y: i32) -> Option<usize> {
        (0..self.nodes.len()).rev().find(|&i| {
            self.nodes[i]
                .bounds
                .is_some_and(|b| b.area() > 0 && b.contains(x, y))
        })
    }

    /// The greatest depth (0 for an empty tree).
    pub fn max_depth(&self) -> usize {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(depth: usize, class: &str) -> AndroidNode {
        AndroidNode {
            depth,
            class: class.into(),
            ..AndroidNode::default()
        }
    }

    fn sample() -> AndroidTree {
        // 0 A ; 1 B ; 2 C ; 3 D ; 4 E   (A(B(C,D)), E) with E top-level
        AndroidTree::new(vec![
            node(0, "A"),
            node(1, "B"),
            node(2, "C"),
            node(2, "D"),
            node(0, "E"),
        ])
        .unwrap()
    }

    #[test]
    fn navigation() {
        let t = sample();
        assert_eq!(t.subtree_end(0), 4);
        assert_eq!(t.subtree_end(1), 4);
        assert_eq!(t.subtree_end(2), 3);
        assert_eq!(t.parent(3), Some(1));
        assert_eq!(t.parent(4), None);
        assert_eq!(t.ancestors(3), [1, 0]);
        assert_eq!(t.children(1), [2, 3]);
        assert_eq!(t.top_level(), [0, 4]);
        assert_eq!(t.max_depth(), 2);
        let sub = t.subtree(1);
        assert_eq!(
            sub.nodes
                .iter()
                .map(|n| (n.depth, n.class.as_str()))
                .collect::<Vec<_>>(),
            [(0, "B"), (1, "C"), (1, "D")]
        );
    }

    #[test]
    fn insert_and_remove() {
        let mut t = sample();
        let sub = AndroidTree::new(vec![node(0, "X"), node(1, "Y")]).unwrap();
        let at = t.insert_subtree(Some(1), 1, &sub);
        assert_eq!(at, 3);
        let shape: Vec<_> = t
            .nodes
            .iter()
            .map(|n| format!("{}{}", n.depth, n.class))
            .collect();
        assert_eq!(shape, ["0A", "1B", "2C", "2X", "3Y", "2D", "0E"]);
        t.check().unwrap();
        assert_eq!(t.insert_subtree(Some(1), 99, &sub), 6);
        assert_eq!(t.remove_subtree(1), 7);
        let shape: Vec<_> = t
            .nodes
            .iter()
            .map(|n| format!("{}{}", n.depth, n.class))
            .collect();
        assert_eq!(shape, ["0A", "0E"]);
        assert_eq!(t.insert_subtree(None, 5, &sub), 2);
    }

    #[test]
    fn bad_depths_are_rejected() {
        assert!(AndroidTree::new(vec![node(1, "A")]).is_err());
        assert!(AndroidTree::new(vec![node(0, "A"), node(2, "B")]).is_err());
        assert!(AndroidTree::new(vec![]).unwrap().is_empty());
    }

    #[test]
    fn find_and_hit_test() {
        let mut t = sample();
        t.nodes[0].bounds = Some(Bounds {
            left: 0,
            top: 0,
            right: 100,
            bottom: 100,
        });
        t.nodes[2].bounds = Some(Bounds {
            left: 10,
            top: 10,
            right: 20,
            bottom: 20,
        });
        t.nodes[3].bounds = Some(Bounds {
            left: 0,
            top: 0,
            right: 0,
            bottom: 0,
        });
        t.nodes[2].resource_id = "com.app:id/ok".into();
        t.nodes[3].content_desc = "Close".into();
        assert_eq!(t.hit_test(15, 15), Some(2));
        assert_eq!(t.hit_test(50, 50), Some(0));
        assert_eq!(t.hit_test(500, 5), None);
        assert_eq!(t.find_by_id("#ok"), [2]);
        assert_eq!(t.find_by_id("com.app:id/ok"), [2]);
        assert_eq!(t.find_by_text("Close"), [3]);
        assert!(t.find_by_text("").is_empty());
    }
}
