//! The common typed tree every state format is read into ([`StateTree`]).
//!
//! Nodes are stored flat, in pre-order, each with its depth and its parent's index, so no
//! operation here or in a parser recurses: an 80-level and a 10,000-level tree are handled by
//! the same loops. A list format (one element per line) is a forest of depth-0 nodes.
//!
//! Bounds are always `[left, top, right, bottom]` in screen pixels ([`Rect`]); each parser
//! converts its own form (Android `[x1,y1][x2,y2]`, DroidBot `[[x1,y1],[x2,y2]]`, OSWorld
//! `"(x, y)"` + `"(w, h)"`, AT-SPI `x y width height`, BrowserGym `box="(l,t,r,b)"`).

mod builder;
mod outline;

pub(crate) use builder::RunPath;
pub use builder::TreeBuilder;
pub(crate) use outline::quote;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A rectangle on screen in pixels: `left`/`top` inclusive, `right`/`bottom` exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rect {
    /// x of the left edge.
    pub left: i32,
    /// y of the top edge.
    pub top: i32,
    /// x of the right edge.
    pub right: i32,
    /// y of the bottom edge.
    pub bottom: i32,
}

impl Rect {
    /// From the two corners (x1, y1) and (x2, y2).
    pub fn from_corners(x1: i32, y1: i32, x2: i32, y2: i32) -> Rect {
        Rect {
            left: x1,
            top: y1,
            right: x2,
            bottom: y2,
        }
    }

    /// From a top-left corner and a size (saturating on overflow).
    pub fn from_xywh(x: i32, y: i32, w: i32, h: i32) -> Rect {
        Rect {
            left: x,
            top: y,
            right: x.saturating_add(w),
            bottom: y.saturating_add(h),
        }
    }

    /// Width in pixels (0 when inverted).
    pub fn width(&self) -> i32 {
        self.right.saturating_sub(self.left).max(0)
    }

    /// Height in pixels (0 when inverted).
    pub fn height(&self) -> i32 {
        self.bottom.saturating_sub(self.top).max(0)
    }

    /// Whether (`x`, `y`) lies inside.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.left && x < self.right && y >= self.top && y < self.bottom
    }
}

impl std::fmt::Display for Rect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{},{}][{},{}]",
            self.left, self.top, self.right, self.bottom
        )
    }
}

/// Where a node's [`NodeKey`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyKind {
    /// An Android `resource-id` (uiautomator, Appium, DroidBot, AndroidWorld `resource_name`).
    ResourceId,
    /// A BrowserGym / WebArena element id (`[12]`, `[a5]`, or an HTML `bid` attribute).
    Bid,
    /// An element id given by the format (HTML `id`, an element-list index, a SoM mark,
    /// a Mind2Web `id=` or candidate letter).
    ElementId,
    /// An AT-SPI / OSWorld accessible id.
    AtspiId,
    /// No id: the node's position (`/0/2/1`: child ordinals from the top level down), or a
    /// JSON path (`$.items[0].title`) for JSON, or a line number for terminal screens.
    Path,
}

/// A node's stable key. Ids are not always unique (an Android parent and child can share a
/// resource-id); a diff reports duplicates rather than merging them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeKey {
    /// Where it came from.
    pub kind: KeyKind,
    /// The value (the id as written, or the path).
    pub value: String,
}

impl NodeKey {
    /// A key of `kind` with `value`.
    pub fn new(kind: KeyKind, value: impl Into<String>) -> NodeKey {
        NodeKey {
            kind,
            value: value.into(),
        }
    }

    /// Whether no key was set (empty positional path, filled in by [`TreeBuilder::finish`]).
    pub fn is_unset(&self) -> bool {
        self.kind == KeyKind::Path && self.value.is_empty()
    }
}

impl Default for NodeKey {
    fn default() -> Self {
        NodeKey::new(KeyKind::Path, "")
    }
}

/// One node of a [`StateTree`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateNode {
    /// Depth (top-level nodes are 0).
    pub depth: usize,
    /// Index of the parent node, `None` for top-level nodes.
    pub parent: Option<usize>,
    /// Role or class: an Android class, an ARIA/AX role, an HTML tag, an AT-SPI role
    /// (`push-button`, `push button`), `#text` for HTML text, a JSON kind.
    pub role: String,
    /// Accessible name or label: Android content-desc, AX name, AT-SPI name, a JSON key.
    pub name: String,
    /// Visible text content: Android text, StaticText, HTML text, a JSON scalar.
    pub text: String,
    /// The stable key.
    pub key: NodeKey,
    /// Bounds on screen in pixels, when the format gives them.
    pub bounds: Option<Rect>,
    /// Every other attribute, in source order.
    pub attributes: Vec<(String, String)>,
    /// 1-based line in the source where the node starts (0 when not known).
    pub line: usize,
}

impl StateNode {
    /// A node with a role, everything else empty.
    pub fn new(role: impl Into<String>) -> StateNode {
        StateNode {
            role: role.into(),
            ..StateNode::default()
        }
    }

    /// The value of attribute `name` (the first when repeated).
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A state read from any format: nodes in pre-order with depth and parent index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateTree {
    /// The parser's name (`uiautomator`, `html`, `axtree`, …).
    pub format: String,
    /// Document-level attributes (`<hierarchy rotation>`, DroidBot `foreground_activity`, a
    /// SoM `URL:` line, an HTML doctype, …), in source order.
    pub attributes: Vec<(String, String)>,
    /// The nodes in pre-order (see [`StateTree::check`]).
    pub nodes: Vec<StateNode>,
}

impl StateTree {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Checks the invariants: the first node has depth 0, each depth is at most one more than
    /// the previous node's, and each parent is the nearest earlier node one level up.
    pub fn check(&self) -> Result<()> {
        let mut stack: Vec<usize> = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.depth > stack.len() {
                return Err(Error::Tree(format!(
                    "node {i} has depth {} under {} open ancestors",
                    n.depth,
                    stack.len()
                )));
            }
            stack.truncate(n.depth);
            if n.parent != stack.last().copied() {
                return Err(Error::Tree(format!(
                    "node {i} has parent {:?}, expected {:?}",
                    n.parent,
                    stack.last()
                )));
            }
            stack.push(i);
        }
        Ok(())
    }

    /// One past the last node of `i`'s subtree. Panics when `i` is out of range.
    pub fn subtree_end(&self, i: usize) -> usize {
        let d = self.nodes[i].depth;
        (i + 1..self.nodes.len())
            .find(|&j| self.nodes[j].depth <= d)
            .unwrap_or(self.nodes.len())
    }

    /// The direct children of `i`, in order. Panics when `i` is out of range.
    pub fn children(&self, i: usize) -> Vec<usize> {
        (i + 1..self.subtree_end(i))
            .filter(|&j| self.nodes[j].parent == Some(i))
            .collect()
    }

    /// The depth-0 nodes.
    pub fn top_level(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].depth == 0)
            .collect()
    }

    /// The greatest depth (0 for an empty tree).
    pub fn max_depth(&self) -> usize {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }

    /// Nodes whose key value equals `value`, in pre-order.
    pub fn find_key(&self, value: &str) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].key.value == value)
            .collect()
    }

    /// Nodes whose role equals `role`, in pre-order.
    pub fn find_role(&self, role: &str) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].role == role)
            .collect()
    }

    /// The first node whose text, else name, equals `s`.
    pub fn find_text(&self, s: &str) -> Option<usize> {
        let by = |f: fn(&StateNode) -> &str| self.nodes.iter().position(|n| f(n) == s);
        by(|n| n.text.as_str()).or_else(|| by(|n| n.name.as_str()))
    }

    /// A readable indented form: one line per node (two spaces per depth level):
    /// `role #key "name" text="…" [l,t][r,b] attr=value …`. See [`outline`](Self::outline).
    pub fn outline(&self) -> String {
        outline::render(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> StateTree {
        let mut b = TreeBuilder::new("test");
        b.open(StateNode::new("a"));
        b.leaf(StateNode::new("b"));
        b.open(StateNode::new("c"));
        b.leaf(StateNode::new("d"));
        b.close();
        b.close();
        b.leaf(StateNode::new("e"));
        b.finish()
    }

    #[test]
    fn navigation_and_paths() {
        let t = tree();
        t.check().unwrap();
        let roles: Vec<_> = t.nodes.iter().map(|n| n.role.as_str()).collect();
        assert_eq!(roles, ["a", "b", "c", "d", "e"]);
        assert_eq!(t.children(0), [1, 2]);
        assert_eq!(t.subtree_end(2), 4);
        assert_eq!(t.top_level(), [0, 4]);
        assert_eq!(t.max_depth(), 2);
        let keys: Vec<_> = t.nodes.iter().map(|n| n.key.value.as_str()).collect();
        assert_eq!(keys, ["/0", "/0/0", "/0/1", "/0/1/0", "/1"]);
        assert_eq!(t.find_key("/0/1/0"), [3]);
    }

    #[test]
    fn check_rejects_bad_parents() {
        let mut t = tree();
        t.nodes[3].parent = Some(0);
        assert!(t.check().is_err());
        let mut t = tree();
        t.nodes[1].depth = 3;
        assert!(t.check().is_err());
    }

    #[test]
    fn rect_conversions() {
        let r = Rect::from_xywh(10, 20, 30, 40);
        assert_eq!(r, Rect::from_corners(10, 20, 40, 60));
        assert_eq!((r.width(), r.height()), (30, 40));
        assert!(r.contains(10, 20) && !r.contains(40, 20));
        assert_eq!(Rect::from_xywh(i32::MAX, 0, 5, 5).right, i32::MAX);
        assert_eq!(r.to_string(), "[10,20][40,60]");
    }
}
