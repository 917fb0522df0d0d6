//! Screen moves with a fixed, exact effect defined by the generator: scrolling a list and
//! closing a dialog with back.
//!
//! [`agentworld_world::action::android::apply`] reports `scroll` and `back` as not computable, because on
//! a real device they reveal content the tree does not hold. The generator instead builds
//! states where the effect is fixed by these rules:
//!
//! - **scroll** (`{"action": "scroll", "target": L, "direction": "down"}`) on a list `L`: a
//!   node that is `scrollable`, enabled, and has at least two children, all with positive-area
//!   bounds of the same height. With `n` children, `k = max(1, n / 2)` ([`scroll_amount`]).
//!   The first `k` children leave; child `j + k` moves into slot `j` (its whole subtree is
//!   translated by the difference between the two children's top-left corners); `k` new items
//!   fill the last `k` slots. A new item is a copy of the last child's subtree, translated
//!   into its slot, with every non-empty text and content-desc replaced by a made-up one and
//!   `checked`, `focused` and `selected` cleared. Nothing else changes.
//! - **back** (`{"action": "back"}`) with a dialog on screen (the last node whose short id is
//!   [`OVERLAY_ID`]): the dialog's subtree is removed; nothing else changes. The generator only
//!   writes `back` when a dialog is present.
//!
//! [`check_move`] verifies a transition against these rules (the made-up texts aside).

use crate::rng::Rng;
use agentworld_world::action::android::{AndroidAction, Direction, Target};
use agentworld_world::state::android::{
    AndroidNode, AndroidTree, Bounds, NodeFlags, render_compact,
};

/// The short resource-id of the dialog overlay that `back` closes (as in Android's
/// `AlertDialog`).
pub const OVERLAY_ID: &str = "android:parentPanel";

/// Made-up list items: what new rows of a scrolled list say.
pub const ITEM_TEXTS: [&str; 24] = [
    "Alice Moreau",
    "Bob Lee",
    "Carmen Diaz",
    "Dmitri Ivanov",
    "Emma Stone",
    "Farid Khan",
    "Grocery list",
    "Flight to Lisbon",
    "Invoice #2231",
    "Weekly report",
    "Team lunch",
    "Dentist 3 PM",
    "Morning run",
    "Jazz playlist",
    "Podcast: Ep. 42",
    "Photos from Rome",
    "Meeting notes",
    "Package shipped",
    "Password reset",
    "New follower",
    "Battery saver",
    "Storage almost full",
    "Rain tomorrow",
    "Yoga class",
];

/// Dialog titles for the overlay.
const DIALOG_TITLES: [&str; 6] = [
    "Discard draft?",
    "Allow notifications?",
    "Delete this item?",
    "Turn on location?",
    "Sign out?",
    "Save changes?",
];

/// How many items a scroll down moves a list of `n` children: `max(1, n / 2)`.
pub fn scroll_amount(n: usize) -> usize {
    (n / 2).max(1)
}

/// Whether node `i` is a list the scroll rule applies to (see the module docs).
pub fn is_scroll_list(tree: &AndroidTree, i: usize) -> bool {
    let n = &tree.nodes[i];
    if !n.flags.scrollable || !n.flags.enabled {
        return false;
    }
    let kids = tree.children(i);
    let heights: Vec<Option<i32>> = kids
        .iter()
        .map(|&c| {
            tree.nodes[c]
                .bounds
                .filter(|b| b.area() > 0)
                .map(|b| b.height())
        })
        .collect();
    kids.len() >= 2 && heights.iter().all(|h| h.is_some() && *h == heights[0])
}

/// The lists of `tree` the scroll rule applies to.
pub fn scroll_lists(tree: &AndroidTree) -> Vec<usize> {
    (0..tree.len())
        .filter(|&i| is_scroll_list(tree, i))
        .collect()
}

fn translate(nodes: &mut [AndroidNode], dx: i32, dy: i32) {
    for n in nodes {
        if let Some(b) = n.bounds.as_mut() {
            *b = Bounds {
                left: b.left + dx,
                top: b.top + dy,
                right: b.right + dx,
                bottom: b.bottom + dy,
            };
        }
    }
}

/// Scrolls list `list` down by [`scroll_amount`] (see the module docs); `made_up(old)` gives
/// the replacement for each non-empty text or content-desc `old` of the new items, in
/// pre-order (text before content-desc). `None` when `list` is not a scroll list.
pub fn scroll_list(
    tree: &AndroidTree,
    list: usize,
    made_up: &mut dyn FnMut(&str) -> String,
) -> Option<AndroidTree> {
    if !is_scroll_list(tree, list) {
        return None;
    }
    let kids = tree.children(list);
    let n = kids.len();
    let k = scroll_amount(n);
    let slots: Vec<Bounds> = kids
        .iter()
        .map(|&c| tree.nodes[c].bounds)
        .collect::<Option<_>>()?;
    let mut items: Vec<Vec<AndroidNode>> = Vec::with_capacity(n);
    for j in 0..n {
        let (src, fresh) = if j + k < n {
            (kids[j + k], false)
        } else {
            (kids[n - 1], true)
        };
        let mut nodes = tree.nodes[src..tree.subtree_end(src)].to_vec();
        let from = tree.nodes[src].bounds?;
        translate(
            &mut nodes,
            slots[j].left - from.left,
            slots[j].top - from.top,
        );
        if fresh {
            for node in &mut nodes {
                if !node.text.is_empty() {
                    node.text = made_up(&node.text);
                }
                if !node.content_desc.is_empty() {
                    node.content_desc = made_up(&node.content_desc);
                }
                node.flags.checked = false;
                node.flags.focused = false;
                node.flags.selected = false;
            }
        }
        items.push(nodes);
    }
    let mut after = tree.clone();
    let (start, end) = (list + 1, tree.subtree_end(list));
    after.nodes.splice(start..end, items.into_iter().flatten());
    Some(after)
}

/// Removes the dialog overlay (the last node with short id [`OVERLAY_ID`]) and its subtree;
/// `None` when there is none.
pub fn close_overlay(tree: &AndroidTree) -> Option<AndroidTree> {
    let i = tree.find_by_id(OVERLAY_ID).last().copied()?;
    let mut after = tree.clone();
    after.remove_subtree(i);
    Some(after)
}

/// Picks a made-up item text different from `old`.
pub fn made_up_text(rng: &mut Rng, old: &str) -> String {
    loop {
        let t = *rng.pick(&ITEM_TEXTS).unwrap_or(&"Item");
        if t != old {
            return t.to_string();
        }
    }
}

/// Inserts a synthetic scrollable list (a `RecyclerView` of 3–5 clickable one-line items)
/// under a container with room for it; returns the list's index.
pub fn insert_list(tree: &mut AndroidTree, rng: &mut Rng) -> Option<usize> {
    let parents: Vec<usize> = (0..tree.len())
        .filter(|&i| {
            super::augment::is_container(tree, i)
                && tree.nodes[i]
                    .bounds
                    .is_some_and(|b| b.width() >= 100 && b.height() >= 150)
        })
        .collect();
    let &parent = rng.pick(&parents)?;
    let pb = tree.nodes[parent].bounds?;
    let n = 3 + rng.below(3);
    let h = (pb.height() / (n as i32 + 1)).clamp(30, 160);
    let top = pb.top + rng.range(0, (pb.height() - h * n as i32).max(0) as i64) as i32;
    let package = tree.nodes[parent].package.clone();
    let pkg = if package.is_empty() {
        "com.example.app".to_string()
    } else {
        package.clone()
    };
    let list = AndroidNode {
        class: "androidx.recyclerview.widget.RecyclerView".into(),
        resource_id: format!("{pkg}:id/list"),
        package: package.clone(),
        bounds: Some(Bounds {
            left: pb.left,
            top,
            right: pb.right,
            bottom: top + h * n as i32,
        }),
        flags: NodeFlags {
            scrollable: true,
            focusable: true,
            ..NodeFlags::default()
        },
        ..AndroidNode::default()
    };
    let mut nodes = vec![list];
    let mut texts: Vec<&str> = ITEM_TEXTS.to_vec();
    rng.shuffle(&mut texts);
    for (j, text) in texts.iter().take(n).enumerate() {
        nodes.push(AndroidNode {
            depth: 1,
            class: "android.widget.TextView".into(),
            resource_id: format!("{pkg}:id/item_title"),
            text: text.to_string(),
            package: package.clone(),
            bounds: Some(Bounds {
                left: pb.left,
                top: top + h * j as i32,
                right: pb.right,
                bottom: top + h * (j as i32 + 1),
            }),
            flags: NodeFlags {
                clickable: true,
                focusable: true,
                ..NodeFlags::default()
            },
            ..AndroidNode::default()
        });
    }
    let sub = AndroidTree {
        nodes,
        ..AndroidTree::default()
    };
    let position = rng.below(tree.children(parent).len() + 1);
    Some(tree.insert_subtree(Some(parent), position, &sub))
}

/// Inserts a dialog overlay (title, Cancel and OK buttons) as the last child of the first
/// top-level node, centred in its bounds; returns the dialog's index. `None` when the tree
/// already has one, or its root is scrollable or has no usable bounds.
pub fn insert_overlay(tree: &mut AndroidTree, rng: &mut Rng) -> Option<usize> {
    if tree.is_empty() || tree.nodes[0].flags.scrollable || !tree.find_by_id(OVERLAY_ID).is_empty()
    {
        return None;
    }
    let rb = tree.nodes[0]
        .bounds
        .filter(|b| b.width() >= 100 && b.height() >= 100)?;
    let (w, h) = (rb.width() * 4 / 5, (rb.height() / 3).max(60));
    let (left, top) = (
        rb.left + (rb.width() - w) / 2,
        rb.top + (rb.height() - h) / 2,
    );
    let package = tree.nodes[0].package.clone();
    let node = |depth, class: &str, id: &str, text: &str, b: Bounds, clickable| AndroidNode {
        depth,
        class: class.into(),
        resource_id: format!("android:id/{id}"),
        text: text.into(),
        package: package.clone(),
        bounds: Some(b),
        flags: NodeFlags {
            clickable,
            focusable: clickable,
            ..NodeFlags::default()
        },
        ..AndroidNode::default()
    };
    let bx = |l, t, r, b| Bounds {
        left: l,
        top: t,
        right: r,
        bottom: b,
    };
    let title = *rng.pick(&DIALOG_TITLES)?;
    let ok = ["OK", "Allow", "Delete", "Turn on", "Yes"][rng.below(5)];
    let (mid, row) = (left + w / 2, top + h * 2 / 3);
    let nodes = vec![
        node(
            0,
            "android.widget.LinearLayout",
            "parentPanel",
            "",
            bx(left, top, left + w, top + h),
            false,
        ),
        node(
            1,
            "android.widget.TextView",
            "alertTitle",
            title,
            bx(left, top, left + w, row),
            false,
        ),
        node(
            1,
            "android.widget.Button",
            "button2",
            "Cancel",
            bx(left, row, mid, top + h),
            true,
        ),
        node(
            1,
            "android.widget.Button",
            "button1",
            ok,
            bx(mid, row, left + w, top + h),
            true,
        ),
    ];
    let sub = AndroidTree {
        nodes,
        ..AndroidTree::default()
    };
    Some(tree.insert_subtree(Some(0), usize::MAX, &sub))
}

/// Checks that `after` is the exact effect of a generator-defined move (`scroll` down on a
/// scroll list, `back` with a dialog) on `before`, taking the made-up texts of new list items
/// from `after`. `Err` says what differs, or that the action is not such a move.
pub fn check_move(
    before: &AndroidTree,
    action: &AndroidAction,
    after: &AndroidTree,
) -> std::result::Result<(), String> {
    let expected = match action {
        AndroidAction::Back => close_overlay(before).ok_or("back without a dialog")?,
        AndroidAction::Scroll {
            target: Some(t),
            direction: Direction::Down,
        } => {
            let list = t.resolve(before).ok_or("scroll target not found")?;
            let texts = new_item_texts(before, list, after).ok_or("not a scroll list")?;
            let mut texts = texts.into_iter();
            scroll_list(before, list, &mut |_| texts.next().unwrap_or_default())
                .ok_or("not a scroll list")?
        }
        other => return Err(format!("`{}` is not a generator move", other.name())),
    };
    let (want, got) = (render_compact(&expected), render_compact(after));
    if want == got {
        Ok(())
    } else {
        Err(format!("expected\n{want}\ngot\n{got}"))
    }
}

/// The texts and content-descs of the new items in `after`, in the order [`scroll_list`]
/// asks for them.
fn new_item_texts(before: &AndroidTree, list: usize, after: &AndroidTree) -> Option<Vec<String>> {
    let kids = before.children(list);
    let n = kids.len();
    let k = scroll_amount(n);
    let last = kids.last().copied()?;
    let template = &before.nodes[last..before.subtree_end(last)];
    if list >= after.len() {
        return None;
    }
    let after_kids = after.children(list);
    let mut out = Vec::new();
    for &c in after_kids.get(n - k..n)? {
        for (t, a) in template.iter().zip(&after.nodes[c..]) {
            if !t.text.is_empty() {
                out.push(a.text.clone());
            }
            if !t.content_desc.is_empty() {
                out.push(a.content_desc.clone());
            }
        }
    }
    Some(out)
}

/// A scroll-down action on `list` named by `target`.
pub fn scroll_action(target: Target) -> AndroidAction {
    AndroidAction::Scroll {
        target: Some(target),
        direction: Direction::Down,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_world::state::android::parse_compact;

    const SCREEN: &str = "\
FrameLayout [0,0][1080,1920]
  TextView #title \"Inbox\" [0,0][1080,100]
  RecyclerView #list scrollable [0,100][1080,500]
    LinearLayout clickable [0,100][1080,200]
      TextView #name \"A\" [20,110][500,190]
    LinearLayout clickable selected [0,200][1080,300]
      TextView #name \"B\" [20,210][500,290]
    LinearLayout clickable [0,300][1080,400]
      TextView #name \"C\" [20,310][500,390]
    LinearLayout clickable [0,400][1080,500]
      TextView #name \"D\" desc=\"d\" [20,410][500,490]
  Button #go \"Go\" clickable [0,500][1080,600]";

    #[test]
    fn scroll_shifts_the_list_by_half() {
        let tree = parse_compact(SCREEN).unwrap().tree;
        assert_eq!(scroll_lists(&tree), [2]);
        let mut fresh = ["X", "x", "Y", "y"].into_iter();
        let after = scroll_list(&tree, 2, &mut |_| fresh.next().unwrap().into()).unwrap();
        let want = "\
FrameLayout [0,0][1080,1920]
  TextView #title \"Inbox\" [0,0][1080,100]
  RecyclerView #list scrollable [0,100][1080,500]
    LinearLayout clickable [0,100][1080,200]
      TextView #name \"C\" [20,110][500,190]
    LinearLayout clickable [0,200][1080,300]
      TextView #name \"D\" desc=\"d\" [20,210][500,290]
    LinearLayout clickable [0,300][1080,400]
      TextView #name \"X\" desc=\"x\" [20,310][500,390]
    LinearLayout clickable [0,400][1080,500]
      TextView #name \"Y\" desc=\"y\" [20,410][500,490]
  Button #go \"Go\" clickable [0,500][1080,600]";
        assert_eq!(render_compact(&after), want);
        let action = scroll_action(Target::Id("list".into()));
        assert_eq!(check_move(&tree, &action, &after), Ok(()));
        let mut wrong = after.clone();
        wrong.nodes[4].text = "Z".into();
        assert!(check_move(&tree, &action, &wrong).is_err());
        // not a list: uneven children, or not scrollable
        assert_eq!(scroll_list(&tree, 0, &mut |_| String::new()), None);
        assert_eq!(scroll_list(&tree, 3, &mut |_| String::new()), None);
    }

    #[test]
    fn back_closes_the_dialog_only() {
        let mut tree = parse_compact(SCREEN).unwrap().tree;
        let before = render_compact(&tree);
        let mut rng = Rng::new(5);
        let i = insert_overlay(&mut tree, &mut rng).unwrap();
        tree.check().unwrap();
        assert_eq!(tree.nodes[i].short_id(), OVERLAY_ID);
        assert_eq!(insert_overlay(&mut tree.clone(), &mut rng), None);
        let after = close_overlay(&tree).unwrap();
        assert_eq!(render_compact(&after), before);
        assert_eq!(check_move(&tree, &AndroidAction::Back, &after), Ok(()));
        assert!(check_move(&after, &AndroidAction::Back, &after).is_err());
    }

    #[test]
    fn synthetic_lists_scroll() {
        for seed in 0..20 {
            let mut tree = parse_compact(SCREEN).unwrap().tree;
            let mut rng = Rng::new(seed);
            let i = insert_list(&mut tree, &mut rng).unwrap();
            tree.check().unwrap();
            assert!(is_scroll_list(&tree, i));
            let after = scroll_list(&tree, i, &mut |old| made_up_text(&mut rng, old)).unwrap();
            let action = scroll_action(Target::Index(i));
            assert_eq!(check_move(&tree, &action, &after), Ok(()));
            assert_eq!(after.len(), tree.len());
        }
    }
}
