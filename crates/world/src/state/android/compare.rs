//! Node-level comparison of a predicted tree with the true one, for evaluation.

use serde::{Deserialize, Serialize};

use super::compact::KeptFields;
use super::{AndroidNode, AndroidTree};

/// How far ahead in the prediction a true node's partner is looked for.
const WINDOW: usize = 64;

/// Counts of aligned node pairs that differ in one field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldMismatches {
    /// Depth differs.
    pub depth: usize,
    /// Text differs.
    pub text: usize,
    /// Content-desc differs.
    pub desc: usize,
    /// Some kept flag differs.
    pub flags: usize,
    /// Bounds differ.
    pub bounds: usize,
}

/// The result of [`compare_trees`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeComparison {
    /// Nodes in the true tree.
    pub true_nodes: usize,
    /// Nodes in the predicted tree.
    pub predicted_nodes: usize,
    /// True nodes that found a partner (same class and short resource-id).
    pub aligned: usize,
    /// True nodes whose partner has all kept fields equal.
    pub matched: usize,
    /// `matched / true_nodes` (1.0 when both trees are empty, 0.0 when only the truth is).
    pub accuracy: f64,
    /// Both trees have the same kept fields, node for node (their `android-compact` renders are equal).
    pub exact: bool,
    /// Field mismatches among aligned pairs.
    pub mismatches: FieldMismatches,
}

fn key(n: &AndroidNode) -> (&str, String) {
    (n.class.as_str(), n.short_id())
}

/// Compares `predicted` with `truth` node by node, on the fields `android-compact` keeps.
///
/// Alignment walks the true nodes in pre-order and pairs each with the first not-yet-used
/// predicted node, at or after the previous partner and at most 64 positions ahead, that has
/// the same class and short resource-id. Order is kept, so an inserted or missing node shifts
/// nothing else. Accuracy is the fraction of true nodes whose partner matches every kept
/// field; exact match requires equal node counts and every node matched in place.
pub fn compare_trees(predicted: &AndroidTree, truth: &AndroidTree) -> TreeComparison {
    let mut next = 0usize;
    let mut aligned = 0;
    let mut matched = 0;
    let mut in_place = 0;
    let mut mm = FieldMismatches::default();
    for (i, t) in truth.nodes.iter().enumerate() {
        let tk = key(t);
        let end = (next + WINDOW).min(predicted.nodes.len());
        let Some(j) = (next..end).find(|&j| key(&predicted.nodes[j]) == tk) else {
            continue;
        };
        next = j + 1;
        aligned += 1;
        let (a, b) = (KeptFields::of(&predicted.nodes[j]), KeptFields::of(t));
        mm.depth += usize::from(a.depth != b.depth);
        mm.text += usize::from(a.text != b.text);
        mm.desc += usize::from(a.desc != b.desc);
        mm.flags += usize::from(a.flags != b.flags);
        mm.bounds += usize::from(a.bounds != b.bounds);
        if a == b {
            matched += 1;
            in_place += usize::from(i == j);
        }
    }
    let n = truth.nodes.len();
    let accuracy = if n == 0 {
        if predicted.nodes.is_empty() { 1.0 } else { 0.0 }
    } else {
        matched as f64 / n as f64
    };
    TreeComparison {
        true_nodes: n,
        predicted_nodes: predicted.nodes.len(),
        aligned,
        matched,
        accuracy,
        exact: predicted.nodes.len() == n && in_place == n,
        mismatches: mm,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_compact;
    use super::*;

    fn tree(text: &str) -> AndroidTree {
        parse_compact(text).unwrap().tree
    }

    const TRUTH: &str = "FrameLayout\n  TextView #title \"Settings\"\n  Switch #wifi checkable checked\n  EditText #q \"abc\" focused\n  Button \"OK\" clickable";

    #[test]
    fn identical_trees_match_exactly() {
        let c = compare_trees(&tree(TRUTH), &tree(TRUTH));
        assert_eq!((c.matched, c.aligned, c.true_nodes), (5, 5, 5));
        assert!(c.exact && c.accuracy == 1.0);
    }

    #[test]
    fn one_changed_field_costs_one_node() {
        let pred = TRUTH.replace("checkable checked", "checkable");
        let c = compare_trees(&tree(&pred), &tree(TRUTH));
        assert_eq!((c.matched, c.aligned), (4, 5));
        assert_eq!(
            c.mismatches,
            FieldMismatches {
                flags: 1,
                ..Default::default()
            }
        );
        assert!(!c.exact && (c.accuracy - 0.8).abs() < 1e-9);
    }

    #[test]
    fn inserted_and_missing_nodes_do_not_shift_the_rest() {
        let pred = TRUTH.replace("  Switch", "  ImageView \"extra\"\n  Switch");
        let c = compare_trees(&tree(&pred), &tree(TRUTH));
        assert_eq!((c.matched, c.predicted_nodes), (5, 6));
        assert!(!c.exact);
        let missing = TRUTH.replace("  Switch #wifi checkable checked\n", "");
        let c = compare_trees(&tree(&missing), &tree(TRUTH));
        assert_eq!((c.matched, c.aligned), (4, 4));
    }

    #[test]
    fn empty_trees() {
        let empty = tree("");
        assert_eq!(compare_trees(&empty, &empty).accuracy, 1.0);
        assert!(compare_trees(&empty, &empty).exact);
        assert_eq!(compare_trees(&tree(TRUTH), &empty).accuracy, 0.0);
        assert_eq!(compare_trees(&empty, &tree(TRUTH)).accuracy, 0.0);
    }
}
