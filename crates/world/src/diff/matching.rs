//! Pairing the nodes of two trees: unique ids first, then position under matched parents, then
//! similarity. See [`diff`](super::diff) for the rules; everything here is a loop over flat
//! arrays (no recursion), so tree depth costs nothing.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

use std::time::Instant;

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};

use crate::state::{KeyKind, NodeKey, StateNode, StateTree};

/// The id key of a node: its key unless that is only a position ([`KeyKind::Path`]).
pub(super) fn id_key(n: &StateNode) -> Option<&NodeKey> {
    (n.key.kind != KeyKind::Path).then_some(&n.key)
}

/// One tree with what matching needs: children lists, sibling positions, subtree hashes.
pub(super) struct Side<'a> {
    /// The tree.
    pub tree: &'a StateTree,
    /// Direct children of each node, in order.
    kids: Vec<Vec<usize>>,
    /// The top-level nodes, in order.
    roots: Vec<usize>,
    /// Each node's parent (`None` for top-level nodes, and for a parent index that does not
    /// come before the node, which a well-formed tree never has).
    pub parent: Vec<Option<usize>>,
    /// Each node's position among its parent's children (or among the top-level nodes).
    pub pos: Vec<usize>,
    /// Hash of each node's role, name, text, id key, attributes and its children's hashes in
    /// order (bounds left out, so a moved subtree still hashes the same).
    hash: Vec<u64>,
    /// Whether the node or a descendant has a non-empty name or text.
    content: Vec<bool>,
}

impl<'a> Side<'a> {
    fn new(tree: &'a StateTree) -> Side<'a> {
        let n = tree.len();
        let mut kids: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        let mut pos = vec![0; n];
        let mut parent = vec![None; n];
        for (i, node) in tree.nodes.iter().enumerate() {
            parent[i] = node.parent.filter(|&p| p < i);
            let list = match parent[i] {
                Some(p) => &mut kids[p],
                None => &mut roots,
            };
            pos[i] = list.len();
            list.push(i);
        }
        let mut hash = vec![0u64; n];
        let mut content = vec![false; n];
        for i in (0..n).rev() {
            let node = &tree.nodes[i];
            let mut h = DefaultHasher::new();
            (&node.role, &node.name, &node.text, id_key(node)).hash(&mut h);
            node.attributes.hash(&mut h);
            let mut has = !node.name.is_empty() || !node.text.is_empty();
            for &k in &kids[i] {
                h.write_u64(hash[k]);
                has |= content[k];
            }
            hash[i] = h.finish();
            content[i] = has;
        }
        Side {
            tree,
            kids,
            roots,
            parent,
            pos,
            hash,
            content,
        }
    }

    /// The children of `parent` (the top-level nodes for `None`).
    pub fn children(&self, parent: Option<usize>) -> &[usize] {
        match parent {
            Some(p) => &self.kids[p],
            None => &self.roots,
        }
    }

    fn node(&self, i: usize) -> &StateNode {
        &self.tree.nodes[i]
    }

    /// Hash of (role, id key) plus what `field` picks, or `None` when that is empty.
    fn sig(&self, i: usize, field: fn(&StateNode) -> &str) -> Option<u64> {
        let n = self.node(i);
        let f = field(n);
        (!f.is_empty()).then(|| {
            let mut h = DefaultHasher::new();
            (&n.role, id_key(n), f).hash(&mut h);
            h.finish()
        })
    }
}

/// The pairing of two trees' nodes.
pub(super) struct Matching<'a> {
    /// The before tree.
    pub a: Side<'a>,
    /// The after tree.
    pub b: Side<'a>,
    /// For each before node, its partner in the after tree.
    pub fwd: Vec<Option<usize>>,
    /// For each after node, its partner in the before tree.
    pub back: Vec<Option<usize>>,
    /// Duplicate keys, in order of first appearance.
    pub warnings: Vec<String>,
    /// When sequence alignment stops looking for the best alignment (native builds only).
    deadline: Option<Instant>,
}

/// How a key kind is named in warnings.
fn kind_name(kind: KeyKind) -> &'static str {
    match kind {
        KeyKind::ResourceId => "resource-id",
        KeyKind::Bid => "bid",
        KeyKind::ElementId => "element id",
        KeyKind::AtspiId => "accessible id",
        KeyKind::Path => "path",
    }
}

impl<'a> Matching<'a> {
    /// Pairs the nodes of `before` and `after`.
    pub fn new(before: &'a StateTree, after: &'a StateTree, deadline: Option<Instant>) -> Self {
        let mut m = Matching {
            a: Side::new(before),
            b: Side::new(after),
            fwd: vec![None; before.len()],
            back: vec![None; after.len()],
            warnings: Vec::new(),
            deadline,
        };
        let mut queue: VecDeque<(Option<usize>, Option<usize>)> = VecDeque::new();
        queue.push_back((None, None));
        queue.extend(m.match_ids().into_iter().map(|(i, j)| (Some(i), Some(j))));
        loop {
            while let Some((pa, pb)) = queue.pop_front() {
                for (i, j) in m.match_children(pa, pb) {
                    queue.push_back((Some(i), Some(j)));
                }
            }
            let found = m.match_leftovers();
            if found.is_empty() {
                break;
            }
            queue.extend(found.into_iter().map(|(i, j)| (Some(i), Some(j))));
        }
        m
    }

    fn pair(&mut self, i: usize, j: usize) {
        self.fwd[i] = Some(j);
        self.back[j] = Some(i);
    }

    /// Pairs the nodes whose id key occurs exactly once in each tree; warns about keys that
    /// occur more than once in either. Returns the pairs in before order.
    fn match_ids(&mut self) -> Vec<(usize, usize)> {
        let mut slot: HashMap<&NodeKey, usize> = HashMap::new();
        let mut seen: Vec<(&NodeKey, Vec<usize>, Vec<usize>)> = Vec::new();
        for (side, tree) in [(0, self.a.tree), (1, self.b.tree)] {
            for (i, node) in tree.nodes.iter().enumerate() {
                let Some(key) = id_key(node) else { continue };
                let s = *slot.entry(key).or_insert_with(|| {
                    seen.push((key, Vec::new(), Vec::new()));
                    seen.len() - 1
                });
                if side == 0 {
                    seen[s].1.push(i);
                } else {
                    seen[s].2.push(i);
                }
            }
        }
        let mut pairs = Vec::new();
        let mut warnings = Vec::new();
        for (key, before, after) in &seen {
            match (before.as_slice(), after.as_slice()) {
                ([i], [j]) => pairs.push((*i, *j)),
                (x, y) if x.len() > 1 || y.len() > 1 => warnings.push(format!(
                    "duplicate {} `{}`: {} node(s) before, {} after; matched by position",
                    kind_name(key.kind),
                    key.value,
                    x.len(),
                    y.len()
                )),
                _ => {}
            }
        }
        pairs.sort_unstable();
        for &(i, j) in &pairs {
            self.pair(i, j);
        }
        self.warnings = warnings;
        pairs
    }

    /// Pairs the unmatched children of the matched parents `pa` / `pb`: equal subtrees along
    /// the longest common subsequence, then in each stretch between those the same-role
    /// (same id) siblings in order, then the rest by a unique subtree, (role, name) or
    /// (role, text). Returns the new pairs.
    fn match_children(&mut self, pa: Option<usize>, pb: Option<usize>) -> Vec<(usize, usize)> {
        let ka: Vec<usize> = (self.a.children(pa).iter())
            .copied()
            .filter(|&i| self.fwd[i].is_none())
            .collect();
        let kb: Vec<usize> = (self.b.children(pb).iter())
            .copied()
            .filter(|&j| self.back[j].is_none())
            .collect();
        if ka.is_empty() || kb.is_empty() {
            return Vec::new();
        }
        let ha: Vec<u64> = ka.iter().map(|&i| self.a.hash[i]).collect();
        let hb: Vec<u64> = kb.iter().map(|&j| self.b.hash[j]).collect();
        let mut pairs = Vec::new();
        let mut gap: (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        let ops = capture_diff_slices_deadline(Algorithm::Myers, &ha, &hb, self.deadline);
        for op in ops {
            let (tag, ra, rb) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                let stretch = std::mem::take(&mut gap);
                let mut found = self.by_role(&stretch.0, &stretch.1);
                found.extend(ra.map(|x| ka[x]).zip(rb.map(|y| kb[y])));
                for &(i, j) in &found {
                    self.pair(i, j);
                }
                pairs.extend(found);
            } else {
                gap.0.extend(ra.map(|x| ka[x]));
                gap.1.extend(rb.map(|y| kb[y]));
            }
        }
        let found = self.by_role(&gap.0, &gap.1);
        for &(i, j) in &found {
            self.pair(i, j);
        }
        pairs.extend(found);
        let rest_a: Vec<usize> = ka.into_iter().filter(|&i| self.fwd[i].is_none()).collect();
        let rest_b: Vec<usize> = kb.into_iter().filter(|&j| self.back[j].is_none()).collect();
        pairs.extend(self.by_similarity(&rest_a, &rest_b, false));
        pairs
    }

    /// Pairs the k-th node of each (role, id key) in `a` with the k-th of the same in `b`.
    fn by_role(&self, a: &[usize], b: &[usize]) -> Vec<(usize, usize)> {
        if a.is_empty() || b.is_empty() {
            return Vec::new();
        }
        let mut queues: HashMap<(&str, Option<&NodeKey>), VecDeque<usize>> = HashMap::new();
        for &i in a {
            let n = self.a.node(i);
            queues
                .entry((n.role.as_str(), id_key(n)))
                .or_default()
                .push_back(i);
        }
        let mut pairs = Vec::new();
        for &j in b {
            let n = self.b.node(j);
            if let Some(i) = queues
                .get_mut(&(n.role.as_str(), id_key(n)))
                .and_then(|q| q.pop_front())
            {
                pairs.push((i, j));
            }
        }
        pairs
    }

    /// Pairs nodes of `a` and `b` that are alone on both sides with the same subtree, then the
    /// same (role, name), then the same (role, text). With `content_only`, subtrees without any
    /// name or text are not paired by their hash. Marks and returns the pairs.
    fn by_similarity(
        &mut self,
        a: &[usize],
        b: &[usize],
        content_only: bool,
    ) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        if a.is_empty() || b.is_empty() {
            return pairs;
        }
        for pass in 0..3 {
            let sig = |side: &Side, i: usize| -> Option<u64> {
                match pass {
                    0 => (!content_only || side.content[i]).then(|| side.hash[i]),
                    1 => side.sig(i, |n| &n.name),
                    _ => side.sig(i, |n| &n.text),
                }
            };
            let mut count: HashMap<u64, (u32, usize, u32)> = HashMap::new();
            for &i in a.iter().filter(|&&i| self.fwd[i].is_none()) {
                if let Some(s) = sig(&self.a, i) {
                    let e = count.entry(s).or_insert((0, i, 0));
                    e.0 += 1;
                }
            }
            for &j in b.iter().filter(|&&j| self.back[j].is_none()) {
                if let Some(e) = sig(&self.b, j).and_then(|s| count.get_mut(&s)) {
                    e.2 += 1;
                }
            }
            let mut found = Vec::new();
            for &j in b.iter().filter(|&&j| self.back[j].is_none()) {
                if let Some(&(1, i, 1)) = sig(&self.b, j).and_then(|s| count.get(&s)) {
                    found.push((i, j));
                }
            }
            for &(i, j) in &found {
                self.pair(i, j);
            }
            pairs.extend(found);
        }
        pairs
    }

    /// Pairs unmatched nodes whose parents are matched (or that are top-level) across the
    /// whole trees, by unique similarity (a subtree moved to another parent). Returns the
    /// new pairs.
    fn match_leftovers(&mut self) -> Vec<(usize, usize)> {
        let roots = |side: &Side, own: &[Option<usize>]| -> Vec<usize> {
            (0..side.tree.len())
                .filter(|&i| own[i].is_none())
                .filter(|&i| side.parent[i].is_none_or(|p| own[p].is_some()))
                .collect()
        };
        let a = roots(&self.a, &self.fwd);
        let b = roots(&self.b, &self.back);
        self.by_similarity(&a, &b, true)
    }
}

/// Marks the members of one longest strictly increasing subsequence of `seq` (the first
/// found, scanning left to right), in O(n log n).
pub(super) fn longest_increasing(seq: &[usize]) -> Vec<bool> {
    // tails[k] = index in seq of the smallest tail of an increasing run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &v) in seq.iter().enumerate() {
        let k = tails.partition_point(|&t| seq[t] < v);
        prev[i] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut keep = vec![false; seq.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        keep[i] = true;
        at = prev[i];
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_increasing_keeps_the_order_that_stayed() {
        assert_eq!(longest_increasing(&[2, 0, 1]), [false, true, true]);
        assert_eq!(longest_increasing(&[0, 1, 2]), [true, true, true]);
        assert_eq!(longest_increasing(&[]), Vec::<bool>::new());
        assert_eq!(
            longest_increasing(&[1, 0, 3, 2])
                .iter()
                .filter(|&&k| k)
                .count(),
            2
        );
    }
}
