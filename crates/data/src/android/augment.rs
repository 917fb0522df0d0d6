//! Derived states: subtrees of real dumps, replaced or shuffled texts, moved and scaled bounds,
//! flipped flags, and synthetic editable, checkable and disabled nodes.

use crate::rng::Rng;
use agentworld_world::state::android::{
    AndroidNode, AndroidTree, Bounds, NodeFlags, render_compact_line,
};

/// UI words for replaced texts and labels.
pub const UI_TEXTS: [&str; 32] = [
    "Settings",
    "Wi-Fi",
    "Bluetooth",
    "Display",
    "Sound",
    "Battery",
    "Storage",
    "Privacy",
    "Location",
    "Accounts",
    "Search",
    "Save",
    "Cancel",
    "Next",
    "Back",
    "Done",
    "Profile",
    "Messages",
    "Contacts",
    "Calendar",
    "Photos",
    "Music",
    "Notes",
    "Dark mode",
    "Airplane mode",
    "Notifications",
    "Auto-rotate",
    "Sign in",
    "Password",
    "Email",
    "Username",
    "Help",
];
/// Text typed into fields.
pub const TYPED: [&str; 16] = [
    "hello",
    "coffee near me",
    "alice@example.com",
    "1234",
    "weather tomorrow",
    "Meet at 5",
    "bob",
    "new york",
    "pizza",
    "password1",
    "42",
    "taxi",
    "北京",
    "café ☕",
    "ok",
    "notes for monday",
];
/// Synthetic switches and checkboxes: (class, id, label).
const CHECKABLES: [(&str, &str, &str); 6] = [
    ("android.widget.Switch", "wifi_switch", "Wi-Fi"),
    ("android.widget.Switch", "dark_mode", "Dark mode"),
    ("android.widget.CheckBox", "remember_me", "Remember me"),
    (
        "android.widget.CheckBox",
        "agree_terms",
        "I agree to the terms",
    ),
    ("android.widget.ToggleButton", "mute", "Mute"),
    ("android.widget.Switch", "airplane", "Airplane mode"),
];
/// Synthetic fields: (class, id, hint text).
const FIELDS: [(&str, &str, &str); 5] = [
    ("android.widget.EditText", "search_src_text", "Search"),
    ("android.widget.EditText", "username", "Username"),
    ("android.widget.EditText", "email", ""),
    (
        "android.widget.AutoCompleteTextView",
        "query",
        "Type a place",
    ),
    ("android.widget.EditText", "message", "Message"),
];

/// The largest subtree (by rendered size) whose `android-compact` form fits in `max_chars`
/// characters, chosen at random among the biggest few; the whole tree when it fits.
pub fn pick_subtree(tree: &AndroidTree, max_chars: usize, rng: &mut Rng) -> Option<AndroidTree> {
    let line_len: Vec<usize> = tree
        .nodes
        .iter()
        .map(|n| render_compact_line(n).len() + 1)
        .collect();
    let mut fits: Vec<(usize, usize)> = (0..tree.len())
        .filter_map(|i| {
            let end = tree.subtree_end(i);
            let base = tree.nodes[i].depth;
            let size: usize = (i..end).map(|j| line_len[j] - 2 * base).sum();
            (size <= max_chars && end - i >= 3).then_some((size, i))
        })
        .collect();
    fits.sort_by(|a, b| b.cmp(a));
    fits.truncate(4);
    let &(_, root) = rng.pick(&fits)?;
    Some(tree.subtree(root))
}

/// Replaces about a third of the texts with UI words.
pub fn replace_texts(tree: &mut AndroidTree, rng: &mut Rng) {
    for n in &mut tree.nodes {
        if !n.text.is_empty() && rng.chance(0.35) {
            n.text = rng.pick(&UI_TEXTS).unwrap_or(&"OK").to_string();
        }
    }
}

/// Shuffles the non-empty texts among the nodes that have one.
pub fn shuffle_texts(tree: &mut AndroidTree, rng: &mut Rng) {
    let idx: Vec<usize> = (0..tree.len())
        .filter(|&i| !tree.nodes[i].text.is_empty())
        .collect();
    let mut texts: Vec<String> = idx.iter().map(|&i| tree.nodes[i].text.clone()).collect();
    rng.shuffle(&mut texts);
    for (i, t) in idx.into_iter().zip(texts) {
        tree.nodes[i].text = t;
    }
}

/// Moves every bounds box by a random offset and scales it, keeping coordinates non-negative.
pub fn renumber_bounds(tree: &mut AndroidTree, rng: &mut Rng) {
    let scale = [0.75, 0.8, 0.9, 1.0, 1.1][rng.below(5)];
    let dx = rng.range(0, 40) as f64;
    let dy = rng.range(0, 120) as f64;
    let map = |v: i32, d: f64| ((v as f64) * scale + d).round().max(0.0) as i32;
    for n in &mut tree.nodes {
        if let Some(b) = n.bounds.as_mut()
            && b.area() > 0
        {
            *b = Bounds {
                left: map(b.left, dx),
                top: map(b.top, dy),
                right: map(b.right, dx),
                bottom: map(b.bottom, dy),
            };
        }
    }
}

/// Flips `selected` on a few nodes and `checked` on some checkable ones.
pub fn toggle_flags(tree: &mut AndroidTree, rng: &mut Rng) {
    for n in &mut tree.nodes {
        if n.flags.checkable && rng.chance(0.5) {
            n.flags.checked = !n.flags.checked;
        } else if n.flags.clickable && rng.chance(0.1) {
            n.flags.selected = !n.flags.selected;
        }
    }
}

/// What kind of synthetic node to insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synthetic {
    /// An EditText-like field.
    Field,
    /// A switch, checkbox or toggle button.
    Checkable,
    /// A disabled button.
    DisabledButton,
    /// A plain label (not interactive).
    Label,
}

/// Whether new children may go under node `i`: a layout or view group, or a node that already
/// has children and is not a text, image or button widget.
pub(super) fn is_container(tree: &AndroidTree, i: usize) -> bool {
    let c = tree.nodes[i].simple_class();
    let leafy = [
        "TextView",
        "Button",
        "ImageView",
        "EditText",
        "Switch",
        "CheckBox",
        "ToggleButton",
    ]
    .iter()
    .any(|l| c.ends_with(l));
    !leafy
        && (c.contains("Layout")
            || c.ends_with("ViewGroup")
            || c.ends_with("ScrollView")
            || !tree.children(i).is_empty())
}

/// Inserts a synthetic node under a random node with positive-area bounds, inside its bounds;
/// returns its index.
pub fn insert_synthetic(tree: &mut AndroidTree, kind: Synthetic, rng: &mut Rng) -> Option<usize> {
    let parents: Vec<usize> = (0..tree.len())
        .filter(|&i| {
            is_container(tree, i)
                && tree.nodes[i]
                    .bounds
                    .is_some_and(|b| b.width() >= 40 && b.height() >= 40)
        })
        .collect();
    let &parent = rng.pick(&parents)?;
    let pb = tree.nodes[parent].bounds?;
    let h = (pb.height() / 4).clamp(20, 160);
    let top = pb.top + rng.range(0, (pb.height() - h).max(0) as i64) as i32;
    let left = pb.left + rng.range(0, (pb.width() / 8) as i64) as i32;
    let bounds = Bounds {
        left,
        top,
        right: pb.right.max(left + 1),
        bottom: top + h,
    };
    let package = tree.nodes[parent].package.clone();
    let id = |name: &str| {
        if package.is_empty() {
            format!("com.example.app:id/{name}")
        } else {
            format!("{package}:id/{name}")
        }
    };
    let mut node = AndroidNode {
        depth: 0,
        package: package.clone(),
        bounds: Some(bounds),
        ..AndroidNode::default()
    };
    match kind {
        Synthetic::Field => {
            let (class, name, hint) = *rng.pick(&FIELDS)?;
            node.class = class.into();
            node.resource_id = id(name);
            node.text = hint.into();
            node.flags = NodeFlags {
                clickable: true,
                focusable: true,
                long_clickable: true,
                ..NodeFlags::default()
            };
        }
        Synthetic::Checkable => {
            let (class, name, label) = *rng.pick(&CHECKABLES)?;
            node.class = class.into();
            node.resource_id = id(name);
            node.text = label.into();
            node.flags = NodeFlags {
                checkable: true,
                clickable: true,
                focusable: true,
                checked: rng.chance(0.5),
                ..NodeFlags::default()
            };
        }
        Synthetic::DisabledButton => {
            node.class = "android.widget.Button".into();
            let (name, label) = [
                ("submit", "Submit"),
                ("continue_button", "Continue"),
                ("send", "Send"),
                ("confirm", "Confirm"),
            ][rng.below(4)];
            node.resource_id = id(name);
            node.text = label.into();
            node.flags = NodeFlags {
                clickable: true,
                focusable: true,
                enabled: false,
                ..NodeFlags::default()
            };
        }
        Synthetic::Label => {
            node.class = "android.widget.TextView".into();
            node.text = rng.pick(&UI_TEXTS)?.to_string();
        }
    }
    let sub = AndroidTree {
        nodes: vec![node],
        ..AndroidTree::default()
    };
    let position = rng.below(tree.children(parent).len() + 1);
    Some(tree.insert_subtree(Some(parent), position, &sub))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_world::state::android::{parse_compact, render_compact};

    fn tree() -> AndroidTree {
        parse_compact("FrameLayout [0,0][1080,1920]\n  LinearLayout [0,0][1080,960]\n    TextView \"A\" [0,0][540,100]\n    TextView \"B\" [540,0][1080,100]\n  Switch #s \"S\" checkable [0,960][1080,1100]").unwrap().tree
    }

    #[test]
    fn subtrees_fit_the_budget() {
        let t = tree();
        let whole = render_compact(&t).len();
        let mut rng = Rng::new(1);
        let sub = pick_subtree(&t, whole + 10, &mut rng).unwrap();
        assert!(sub.len() >= 3 && sub.nodes[0].depth == 0);
        assert!(render_compact(&sub).len() <= whole + 10);
        assert_eq!(pick_subtree(&t, 10, &mut rng), None);
    }

    #[test]
    fn augmentations_keep_the_shape() {
        let mut rng = Rng::new(2);
        for _ in 0..20 {
            let mut t = tree();
            shuffle_texts(&mut t, &mut rng);
            replace_texts(&mut t, &mut rng);
            renumber_bounds(&mut t, &mut rng);
            toggle_flags(&mut t, &mut rng);
            assert_eq!(t.len(), 5);
            t.check().unwrap();
            assert!(
                t.nodes
                    .iter()
                    .all(|n| n.bounds.is_some_and(|b| b.left >= 0 && b.top >= 0))
            );
        }
    }

    #[test]
    fn synthetic_nodes_sit_inside_their_parent() {
        let mut rng = Rng::new(3);
        for kind in [
            Synthetic::Field,
            Synthetic::Checkable,
            Synthetic::DisabledButton,
            Synthetic::Label,
        ] {
            let mut t = tree();
            let i = insert_synthetic(&mut t, kind, &mut rng).unwrap();
            t.check().unwrap();
            let p = t.parent(i).unwrap();
            let (b, pb) = (t.nodes[i].bounds.unwrap(), t.nodes[p].bounds.unwrap());
            assert!(
                b.left >= pb.left && b.top >= pb.top && b.bottom <= pb.bottom.max(b.top + 20),
                "{kind:?}"
            );
            let n = &t.nodes[i];
            match kind {
                Synthetic::Field => assert!(n.is_editable()),
                Synthetic::Checkable => assert!(n.flags.checkable),
                Synthetic::DisabledButton => assert!(!n.flags.enabled),
                Synthetic::Label => assert!(!n.is_interactive()),
            }
        }
    }
}
