//! Node-level F1 of a predicted state against the true one, on the structural diff; and the
//! same over lines for text states (terminal screens).
//!
//! A node of the prediction is right when the diff pairs it with a node of the truth and
//! reports nothing about the pair: no text, name, attribute, bounds or role change and no move
//! (a moved subtree costs its root only; its children, paired and unchanged, still count).
//! Inserted and removed subtrees cost every node in them. Then precision = right / predicted
//! nodes, recall = right / true nodes, F1 their harmonic mean. For lines, the right lines are
//! those a minimal line diff keeps (a longest common subsequence).

use std::collections::HashSet;

use serde::Serialize;

use super::{Change, diff, line_diff};
use crate::state::StateTree;

/// Node (or line) counts and the F1 they give.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NodeF1 {
    /// Nodes of the prediction paired with an identical node of the truth.
    pub right: usize,
    /// Nodes in the prediction.
    pub predicted: usize,
    /// Nodes in the truth.
    pub truth: usize,
}

impl NodeF1 {
    /// `right / predicted` (1 for an empty prediction of an empty truth, else 0 when empty).
    pub fn precision(&self) -> f64 {
        ratio(self.right, self.predicted, self.truth == 0)
    }

    /// `right / truth` (1 when both are empty, else 0 when the truth is empty).
    pub fn recall(&self) -> f64 {
        ratio(self.right, self.truth, self.predicted == 0)
    }

    /// The harmonic mean of precision and recall, in [0, 1].
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn ratio(right: usize, of: usize, both_empty: bool) -> f64 {
    if of == 0 {
        f64::from(both_empty)
    } else {
        right as f64 / of as f64
    }
}

/// Node-level F1 of `predicted` against `truth` (see the module docs).
pub fn node_f1(predicted: &StateTree, truth: &StateTree) -> NodeF1 {
    let d = diff(predicted, truth);
    let mut removed = 0;
    let mut inserted = 0;
    let mut changed: HashSet<usize> = HashSet::new();
    for c in &d.changes {
        match c {
            Change::Removed { size, .. } => removed += size,
            Change::Inserted { size, .. } => inserted += size,
            Change::Moved { node, .. }
            | Change::TextChanged { node, .. }
            | Change::AttributeChanged { node, .. } => {
                if let Some(j) = node.after {
                    changed.insert(j);
                }
            }
            Change::DocumentChanged { .. } => {}
        }
    }
    let paired = truth.len().saturating_sub(inserted);
    debug_assert_eq!(paired, predicted.len().saturating_sub(removed));
    NodeF1 {
        right: paired.saturating_sub(changed.len()),
        predicted: predicted.len(),
        truth: truth.len(),
    }
}

/// Line-level F1 of `predicted` against `truth`: lines a minimal line diff keeps are right
/// (trailing whitespace and a final line ending ignored).
pub fn line_f1(predicted: &str, truth: &str) -> NodeF1 {
    let norm = |s: &str| -> String {
        s.trim_end()
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (p, t) = (norm(predicted), norm(truth));
    let count = |s: &str| if s.is_empty() { 0 } else { s.lines().count() };
    let (np, nt) = (count(&p), count(&t));
    let removed = line_diff(&p, &t)
        .iter()
        .filter(|c| c.op == super::LineOp::Removed)
        .count();
    NodeF1 {
        right: np - removed.min(np),
        predicted: np,
        truth: nt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Registry;

    fn tree(format: &str, text: &str) -> StateTree {
        Registry::standard().parse(format, text).unwrap().tree
    }

    #[test]
    fn an_edit_costs_one_node_on_each_side() {
        let truth = tree(
            "android-compact",
            "FrameLayout [0,0][100,100]\n  EditText #q \"pizza\" focused [0,0][50,10]\n  Button #go \"Go\" [0,20][50,30]",
        );
        let before = tree(
            "android-compact",
            "FrameLayout [0,0][100,100]\n  EditText #q \"\" [0,0][50,10]\n  Button #go \"Go\" [0,20][50,30]",
        );
        let s = node_f1(&truth, &truth);
        assert_eq!((s.right, s.predicted, s.truth), (3, 3, 3));
        assert!((s.f1() - 1.0).abs() < 1e-12);
        let s = node_f1(&before, &truth);
        assert_eq!((s.right, s.predicted, s.truth), (2, 3, 3));
        assert!((s.f1() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn missing_and_extra_subtrees_cost_every_node() {
        let truth = tree(
            "axtree",
            "[1] RootWebArea 'Shop'\n\t[2] link 'Home'\n\t[3] list ''\n\t\t[4] listitem 'Tea'\n\t\t[5] listitem 'Jam'",
        );
        let short = tree("axtree", "[1] RootWebArea 'Shop'\n\t[2] link 'Home'");
        let s = node_f1(&short, &truth);
        assert_eq!((s.right, s.predicted, s.truth), (2, 2, 5));
        assert!((s.precision() - 1.0).abs() < 1e-12 && (s.recall() - 0.4).abs() < 1e-12);
        let s = node_f1(&truth, &short);
        assert_eq!((s.right, s.predicted, s.truth), (2, 5, 2));
        // Nothing in common.
        let other = tree("axtree", "[9] RootWebArea 'Other'");
        assert_eq!(node_f1(&other, &truth).f1(), 0.0);
    }

    #[test]
    fn lines_are_scored_on_the_longest_common_subsequence() {
        let truth = "$ ls\na.txt\n$ cat a.txt\nhello\n$ ";
        assert!((line_f1(truth, truth).f1() - 1.0).abs() < 1e-12);
        let s = line_f1("$ ls\na.txt\n$ ", truth);
        assert_eq!((s.right, s.predicted, s.truth), (3, 3, 5));
        let s = line_f1("junk\n$ ls\na.txt\n$ cat a.txt\nbye\n$", truth);
        assert_eq!((s.right, s.predicted, s.truth), (4, 6, 5));
        assert_eq!(line_f1("", "").f1(), 1.0);
        assert_eq!(line_f1("x", "").f1(), 0.0);
    }
}
