//! Building a [`StateTree`] node by node with an explicit stack, and giving keyless nodes
//! their positional path.

use super::{KeyKind, NodeKey, StateNode, StateTree};

/// Builds a [`StateTree`] in pre-order. Either open/close elements as a markup reader meets
/// them ([`open`](Self::open), [`leaf`](Self::leaf), [`close`](Self::close)), or push nodes at
/// an explicit depth as an indented-text reader does ([`push_at`](Self::push_at)). Depth and
/// parent are always set by the builder, so the tree's invariants hold by construction.
#[derive(Debug)]
pub struct TreeBuilder {
    tree: StateTree,
    /// Indices of the open nodes, outermost first.
    open: Vec<usize>,
}

impl TreeBuilder {
    /// An empty tree for format `format`.
    pub fn new(format: &str) -> TreeBuilder {
        TreeBuilder {
            tree: StateTree {
                format: format.to_string(),
                ..StateTree::default()
            },
            open: Vec::new(),
        }
    }

    /// Adds a document-level attribute.
    pub fn doc_attr(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.tree.attributes.push((key.into(), value.into()));
    }

    /// Appends `node` as the last child of the innermost open node (or at top level), and
    /// opens it. Returns its index.
    pub fn open(&mut self, node: StateNode) -> usize {
        let i = self.leaf(node);
        self.open.push(i);
        i
    }

    /// Appends `node` as the last child of the innermost open node without opening it.
    pub fn leaf(&mut self, mut node: StateNode) -> usize {
        node.depth = self.open.len();
        node.parent = self.open.last().copied();
        self.tree.nodes.push(node);
        self.tree.nodes.len() - 1
    }

    /// Closes the innermost open node (nothing when none is open).
    pub fn close(&mut self) {
        self.open.pop();
    }

    /// Number of open nodes (the depth the next node gets).
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// Appends `node` at `depth`, clamped to at most one level below the previous node; the
    /// node is left open. Returns (index, the depth it got).
    pub fn push_at(&mut self, depth: usize, node: StateNode) -> (usize, usize) {
        let depth = depth.min(self.open.len());
        self.open.truncate(depth);
        let i = self.open(node);
        (i, depth)
    }

    /// The node at `i`, for filling in fields read after it was added.
    pub fn node_mut(&mut self, i: usize) -> Option<&mut StateNode> {
        self.tree.nodes.get_mut(i)
    }

    /// The innermost open node.
    pub fn current(&mut self) -> Option<&mut StateNode> {
        let i = *self.open.last()?;
        self.tree.nodes.get_mut(i)
    }

    /// Number of nodes so far.
    pub fn len(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Whether no node was added.
    pub fn is_empty(&self) -> bool {
        self.tree.nodes.is_empty()
    }

    /// The tree, with a positional path ([`KeyKind::Path`]) as key for every node that has
    /// none: child ordinals from the top level down, each after a `/` (`/0/2/1`; the leading
    /// slash keeps paths apart from ids such as `5`), a run of `k > 7` equal ordinals written
    /// `o*k` (`/0*40/3`) so deep wrapper chains stay short.
    pub fn finish(mut self) -> StateTree {
        let mut path: RunPath<usize> = RunPath::default();
        let mut next: Vec<usize> = Vec::new();
        for node in &mut self.tree.nodes {
            let d = node.depth;
            next.truncate(d + 1);
            if next.len() == d {
                next.push(0);
            }
            let ordinal = next[d];
            next[d] += 1;
            path.truncate(d);
            path.push(ordinal);
            if node.key.is_unset() {
                node.key = NodeKey::new(
                    KeyKind::Path,
                    format!("/{}", path.render("/", |o| o.to_string())),
                );
            }
        }
        self.tree
    }
}

/// Runs longer than this are written `seg*k`.
const RUN: usize = 7;

/// A path kept as runs of equal segments, so pushing, truncating and rendering cost the number
/// of runs, not the depth (a 10,000-level chain of only children is one run).
#[derive(Debug, Clone)]
pub(crate) struct RunPath<T> {
    runs: Vec<(T, usize)>,
    len: usize,
}

impl<T> Default for RunPath<T> {
    fn default() -> Self {
        RunPath {
            runs: Vec::new(),
            len: 0,
        }
    }
}

impl<T: PartialEq> RunPath<T> {
    /// Number of segments.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends a segment.
    pub(crate) fn push(&mut self, seg: T) {
        match self.runs.last_mut() {
            Some((s, n)) if *s == seg => *n += 1,
            _ => self.runs.push((seg, 1)),
        }
        self.len += 1;
    }

    /// Keeps the first `n` segments.
    pub(crate) fn truncate(&mut self, n: usize) {
        while self.len > n {
            let Some((_, count)) = self.runs.last_mut() else {
                break;
            };
            let drop = (self.len - n).min(*count);
            *count -= drop;
            self.len -= drop;
            if *count == 0 {
                self.runs.pop();
            }
        }
    }

    /// The segments joined by `sep`; a run of `k > 7` equal segments is written `seg*k`. When
    /// that is longer than about 200 bytes, the middle is left out and written `…n…` (`n`
    /// segments), so a key costs the same at any depth.
    pub(crate) fn render(&self, sep: &str, show: impl Fn(&T) -> String) -> String {
        const BUDGET: usize = 96;
        let piece = |(seg, count): &(T, usize)| -> String {
            let s = show(seg);
            if *count > RUN {
                format!("{s}*{count}")
            } else {
                vec![s; *count].join(sep)
            }
        };
        let (mut head, mut head_len, mut i) = (Vec::new(), 0, 0);
        while i < self.runs.len() && head_len < BUDGET {
            let p = piece(&self.runs[i]);
            head_len += p.len() + sep.len();
            head.push(p);
            i += 1;
        }
        let (mut tail, mut tail_len, mut j) = (Vec::new(), 0, self.runs.len());
        while j > i && tail_len < BUDGET {
            j -= 1;
            let p = piece(&self.runs[j]);
            tail_len += p.len() + sep.len();
            tail.push(p);
        }
        tail.reverse();
        if j > i {
            let left_out: usize = self.runs[i..j].iter().map(|(_, c)| c).sum();
            head.push(format!("…{left_out}…"));
        }
        head.extend(tail);
        head.join(sep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_at_clamps_depth() {
        let mut b = TreeBuilder::new("t");
        assert_eq!(b.push_at(3, StateNode::new("a")).1, 0);
        assert_eq!(b.push_at(1, StateNode::new("b")).1, 1);
        assert_eq!(b.push_at(5, StateNode::new("c")).1, 2);
        assert_eq!(b.push_at(0, StateNode::new("d")).1, 0);
        let t = b.finish();
        t.check().unwrap();
        assert_eq!(t.nodes[2].parent, Some(1));
        assert_eq!(t.nodes[3].parent, None);
    }

    #[test]
    fn paths_compress_runs() {
        let path = |segs: &[usize]| {
            let mut p = RunPath::default();
            for &s in segs {
                p.push(s);
            }
            p.render("/", |o| o.to_string())
        };
        assert_eq!(path(&[0, 0, 1]), "0/0/1");
        assert_eq!(path(&[0, 0, 0, 0, 3]), "0/0/0/0/3");
        assert_eq!(path(&[0, 0, 0, 0, 0, 0, 0, 0, 3]), "0*8/3");
        assert_eq!(path(&[]), "");
        let mut p = RunPath::default();
        for s in [1, 1, 1, 2, 2] {
            p.push(s);
        }
        p.truncate(2);
        assert_eq!(
            (p.len(), p.render("/", |o| o.to_string())),
            (2, "1/1".into())
        );
        for _ in 0..7 {
            p.push(1);
        }
        assert_eq!(p.render("/", |o| o.to_string()), "1*9");
        let mut p = RunPath::default();
        for i in 0..1000 {
            p.push(i % 2);
        }
        let r = p.render("/", |o| o.to_string());
        assert!(r.len() < 220 && r.contains("/…"), "{r}");
        assert!(r.starts_with("0/1/0/1") && r.ends_with("0/1"), "{r}");
    }

    #[test]
    fn deep_chains_stay_flat() {
        let mut b = TreeBuilder::new("t");
        for _ in 0..10_000 {
            b.open(StateNode::new("x"));
        }
        let t = b.finish();
        assert_eq!(t.max_depth(), 9_999);
        assert_eq!(t.nodes[9_999].key.value, "/0*10000");
        t.check().unwrap();
        drop(t);
    }
}
