//! States as the renderers use them: a state text read into the common tree, and the marks
//! that highlight what changed between two states. Plain data, tested natively.

use std::collections::{HashMap, HashSet};

use agentworld_world::Domain;
use agentworld_world::diff::{Change, LineOp, diff, line_diff};
use agentworld_world::state::{Registry, StateTree};

/// A state text read for display.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The tree, when some parser could read the text.
    pub tree: Option<StateTree>,
    /// Parser warnings and the reason no tree was read, for the page.
    pub notes: Vec<String>,
}

/// Reads `text` for `domain`. Terminal screens are shown as text and never parsed here.
pub fn parse(domain: Domain, text: &str) -> Parsed {
    if domain == Domain::Terminal || text.trim().is_empty() {
        return Parsed::default();
    }
    match Registry::standard().parse("auto", text) {
        // Text only the plain-text reader takes is no page, phone or desktop: show it as text.
        Ok(p) if p.tree.format == "terminal" => Parsed {
            tree: None,
            notes: vec![format!(
                "not read as a {} state: no state format matches; shown as text",
                domain.as_str()
            )],
        },
        Ok(p) => Parsed {
            notes: p.warnings.iter().take(20).map(|w| w.to_string()).collect(),
            tree: Some(p.tree),
        },
        Err(e) => Parsed {
            tree: None,
            notes: vec![format!("not read as a state: {e}")],
        },
    }
}

/// How a node changed, as its highlight shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    /// New in the after state.
    Inserted,
    /// Gone from the before state.
    Removed,
    /// Under another parent or out of order.
    Moved,
    /// Text, name, bounds or an attribute changed.
    Changed,
}

impl Mark {
    /// The CSS class / `data-aw-change` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Inserted => "inserted",
            Mark::Removed => "removed",
            Mark::Moved => "moved",
            Mark::Changed => "changed",
        }
    }
}

/// What changed between two trees, per node of each side, plus a readable line per change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// Marks on the before tree's nodes (removed subtrees: every node).
    pub before: HashMap<usize, Mark>,
    /// Marks on the after tree's nodes (inserted subtrees: every node).
    pub after: HashMap<usize, Mark>,
    /// One line per change.
    pub lines: Vec<String>,
    /// `2 inserted, 1 removed, …`.
    pub summary: String,
    /// Warnings of the diff.
    pub warnings: Vec<String>,
}

impl Changes {
    /// The after-side node indexes whose subtree holds a change (for opening tree views).
    pub fn after_ancestors(&self, tree: &StateTree) -> HashSet<usize> {
        ancestors(tree, self.after.keys())
    }

    /// The before-side node indexes whose subtree holds a change.
    pub fn before_ancestors(&self, tree: &StateTree) -> HashSet<usize> {
        ancestors(tree, self.before.keys())
    }
}

fn ancestors<'a>(tree: &StateTree, nodes: impl Iterator<Item = &'a usize>) -> HashSet<usize> {
    let mut out = HashSet::new();
    for &i in nodes {
        let mut p = tree.nodes.get(i).and_then(|n| n.parent);
        while let Some(j) = p {
            if !out.insert(j) {
                break;
            }
            p = tree.nodes[j].parent;
        }
    }
    out
}

/// The structural diff from `before` to `after` as marks.
pub fn changes(before: &StateTree, after: &StateTree) -> Changes {
    let d = diff(before, after);
    let mut out = Changes {
        lines: d.render().lines().map(str::to_owned).collect(),
        summary: d.summary(),
        warnings: d.warnings.clone(),
        ..Changes::default()
    };
    let subtree = |t: &StateTree, i: usize| i..t.subtree_end(i).max(i + 1);
    for c in &d.changes {
        match c {
            Change::Inserted { node, .. } => {
                if let Some(j) = node.after.filter(|&j| j < after.len()) {
                    for k in subtree(after, j) {
                        out.after.insert(k, Mark::Inserted);
                    }
                }
            }
            Change::Removed { node, .. } => {
                if let Some(i) = node.before.filter(|&i| i < before.len()) {
                    for k in subtree(before, i) {
                        out.before.insert(k, Mark::Removed);
                    }
                }
            }
            Change::Moved { node, .. } => mark(&mut out, node.before, node.after, Mark::Moved),
            Change::TextChanged { node, .. } | Change::AttributeChanged { node, .. } => {
                mark(&mut out, node.before, node.after, Mark::Changed)
            }
            Change::DocumentChanged { .. } => {}
        }
    }
    out
}

fn mark(out: &mut Changes, before: Option<usize>, after: Option<usize>, m: Mark) {
    // A moved node that also changed keeps the first mark given (moved).
    if let Some(i) = before {
        out.before.entry(i).or_insert(m);
    }
    if let Some(j) = after {
        out.after.entry(j).or_insert(m);
    }
}

/// Terminal screens: the 0-based lines of `before` that went away and of `after` that came.
pub fn changed_lines(before: &str, after: &str) -> (HashSet<usize>, HashSet<usize>) {
    let mut removed = HashSet::new();
    let mut added = HashSet::new();
    for c in line_diff(before, after) {
        match c.op {
            LineOp::Removed => removed.extend(c.before_line.map(|l| l - 1)),
            LineOp::Added => added.extend(c.after_line.map(|l| l - 1)),
        }
    }
    (removed, added)
}

/// The action that tapping node `i` of an Android tree makes: by short resource id when the
/// id is unique, else at the centre of its bounds.
pub fn android_tap(tree: &StateTree, i: usize) -> Option<String> {
    let n = tree.nodes.get(i)?;
    let id = n.key.value.rsplit(":id/").next().unwrap_or("");
    if n.key.kind == agentworld_world::state::KeyKind::ResourceId
        && !id.is_empty()
        && tree
            .nodes
            .iter()
            .filter(|m| m.key.value.rsplit(":id/").next() == Some(id))
            .count()
            == 1
    {
        return Some(serde_json::json!({"action": "tap", "target": format!("#{id}")}).to_string());
    }
    let b = n.bounds?;
    let (x, y) = ((b.left + b.right) / 2, (b.top + b.bottom) / 2);
    Some(serde_json::json!({"action": "tap", "target": {"x": x, "y": y}}).to_string())
}

/// The action that clicking node `i` of a web state makes: `click('bid')` when it has a bid,
/// else `None` (the composer then says to pick an element with one).
pub fn web_click(tree: &StateTree, i: usize) -> Option<String> {
    let n = tree.nodes.get(i)?;
    if n.key.kind != agentworld_world::state::KeyKind::Bid {
        return None;
    }
    let bid = n.key.value.replace('\\', "\\\\").replace('\'', "\\'");
    Some(match n.role.as_str() {
        "input" | "textarea" | "textbox" | "searchbox" | "combobox" => format!("fill('{bid}', '')"),
        _ => format!("click('{bid}')"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> StateTree {
        parse(Domain::Web, text).tree.unwrap()
    }

    #[test]
    fn gui_text_no_state_format_reads_is_shown_as_text() {
        let p = parse(Domain::Android, "the screen is unchanged.\nnothing else");
        assert!(p.tree.is_none());
        assert!(p.notes[0].contains("shown as text"), "{:?}", p.notes);
        assert!(
            parse(Domain::Android, "FrameLayout [0,0][10,10]")
                .tree
                .is_some()
        );
    }

    #[test]
    fn inserted_and_changed_nodes_are_marked() {
        let a = tree(
            "<html><body><p bid=\"1\">a</p><b bid=\"2\">x</b><i bid=\"9\">gone</i></body></html>",
        );
        let b = tree(
            "<html><body><p bid=\"1\">b</p><b bid=\"2\">x</b><ul bid=\"3\"><li>n</li></ul></body></html>",
        );
        let c = changes(&a, &b);
        let after_p = b.find_key("1")[0];
        let ul = b.find_key("3")[0];
        assert_eq!(c.after.get(&ul), Some(&Mark::Inserted));
        assert_eq!(
            c.after.get(&(ul + 1)),
            Some(&Mark::Inserted),
            "subtree marked"
        );
        // The text node under p changed (its parent p is unchanged).
        assert_eq!(c.after.get(&(after_p + 1)), Some(&Mark::Changed), "{c:?}");
        assert_eq!(c.before.get(&a.find_key("9")[0]), Some(&Mark::Removed));
        assert!(!c.after.contains_key(&b.find_key("2")[0]));
        assert!(c.after_ancestors(&b).contains(&after_p));
        assert!(c.summary.contains("1 inserted"), "{}", c.summary);
    }

    #[test]
    fn taps_and_clicks() {
        let t = parse(
            Domain::Android,
            "FrameLayout [0,0][100,100]\n  Switch #wifi \"Wi-Fi\" checkable clickable [10,10][50,30]\n  \
             TextView \"x\" [0,40][100,60]",
        )
        .tree
        .unwrap();
        assert_eq!(
            android_tap(&t, 1).unwrap(),
            r##"{"action":"tap","target":"#wifi"}"##
        );
        assert_eq!(
            android_tap(&t, 2).unwrap(),
            r#"{"action":"tap","target":{"x":50,"y":50}}"#
        );
        let w = tree("<body><a bid=\"a1\">x</a><input bid=\"5\"><p>t</p></body>");
        assert_eq!(web_click(&w, w.find_key("a1")[0]).unwrap(), "click('a1')");
        assert_eq!(web_click(&w, w.find_key("5")[0]).unwrap(), "fill('5', '')");
        assert_eq!(web_click(&w, w.find_role("p")[0]), None);
    }

    #[test]
    fn terminal_lines() {
        let (r, a) = changed_lines("$ ls\n$ ", "$ ls\na b\n$ ");
        assert!(r.is_empty());
        assert_eq!(a, HashSet::from([1]));
    }
}
