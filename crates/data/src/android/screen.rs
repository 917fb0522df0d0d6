//! Made-up screens: random Android hierarchies with laid-out bounds, so that training states
//! are not all cut from a handful of real dumps.
//!
//! A model trained on subtrees of four dumps learns those screens (their classes, ids, texts
//! and bounds) instead of copying the one in its prompt, and on a held-out dump it writes a
//! remembered node in place of the real one. A made-up screen cannot be remembered: every row
//! draws a new one (a root window, a vertical stack of 3–9 rows, a third of them a horizontal
//! group of 2–4 widgets, each widget a class, a text or description, maybe a resource-id,
//! and flags that fit its class), with bounds that tile the screen as a real layout would.
//!
//! Two shapes of real dumps are drawn on purpose, because a model that has never seen them
//! loses its place on them: a chain of 1–5 nested full-screen containers between the root and
//! the content (Flutter and Compose dumps nest `View [0,0][1080,2400]` several times), and
//! texts and descriptions of two lines (`desc="Explorer\nTab 1 of 3"`, written with an
//! escaped line break in the compact form), including tab bars whose buttons say which tab
//! they are.

use super::augment::UI_TEXTS;
use super::moves::ITEM_TEXTS;
use crate::rng::Rng;
use agentworld_world::state::android::{AndroidNode, AndroidTree, Bounds, NodeFlags};

/// First and second parts of made-up package names (`com.<a>.<b>`).
const PACKAGE_WORDS: [&str; 16] = [
    "acme", "example", "notes", "mail", "shop", "maps", "fit", "bank", "news", "chat", "photo",
    "music", "weather", "travel", "todo", "reader",
];

/// Resource-id names.
const ID_WORDS: [&str; 24] = [
    "title", "subtitle", "icon", "avatar", "label", "summary", "action", "button", "toolbar",
    "header", "footer", "row", "item", "price", "count", "badge", "status", "time", "name",
    "message", "search", "menu", "tab", "card",
];

/// Short texts beside the UI words: counts, times, prices, dates.
pub const SHORT_TEXTS: [&str; 16] = [
    "3 new",
    "12:45",
    "$19.99",
    "Mon, 4 Mar",
    "87%",
    "2 min ago",
    "Today",
    "+1 555 0101",
    "5 km",
    "Free",
    "v2.3.1",
    "14°C",
    "1,204",
    "Yesterday",
    "Open",
    "20 items",
];

/// Containers: (class, weight).
const CONTAINERS: [(&str, u32); 5] = [
    ("android.widget.LinearLayout", 4),
    ("android.view.ViewGroup", 3),
    ("android.widget.FrameLayout", 2),
    ("android.widget.RelativeLayout", 1),
    ("android.view.View", 1),
];

/// Widgets: (class, weight).
const WIDGETS: [(&str, u32); 9] = [
    ("android.widget.TextView", 6),
    ("android.widget.Button", 2),
    ("android.widget.ImageView", 2),
    ("android.widget.ImageButton", 1),
    ("android.widget.EditText", 1),
    ("android.widget.Switch", 1),
    ("android.widget.CheckBox", 1),
    ("android.view.View", 2),
    ("android.widget.ProgressBar", 1),
];

fn pick_weighted<'a>(rng: &mut Rng, items: &[(&'a str, u32)]) -> &'a str {
    let weights: Vec<u32> = items.iter().map(|(_, w)| *w).collect();
    items[rng.weighted(&weights)].0
}

fn one_line(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => UI_TEXTS[rng.below(UI_TEXTS.len())].to_string(),
        1 => ITEM_TEXTS[rng.below(ITEM_TEXTS.len())].to_string(),
        _ => SHORT_TEXTS[rng.below(SHORT_TEXTS.len())].to_string(),
    }
}

/// Two texts joined by a line break.
fn two_lines(rng: &mut Rng) -> String {
    format!("{}\n{}", one_line(rng), one_line(rng))
}

/// A text of one line, or one time in eight [`two_lines`].
fn some_text(rng: &mut Rng) -> String {
    if rng.chance(0.125) {
        two_lines(rng)
    } else {
        one_line(rng)
    }
}

/// Splits `total` pixels into `n` positive parts of random weights (1 to 4 each).
fn split(rng: &mut Rng, total: i32, n: usize) -> Vec<i32> {
    let weights: Vec<i32> = (0..n).map(|_| 1 + rng.below(4) as i32).collect();
    let sum: i32 = weights.iter().sum();
    let mut parts: Vec<i32> = weights.iter().map(|w| total * w / sum).collect();
    let used: i32 = parts.iter().sum();
    if let Some(last) = parts.last_mut() {
        *last += total - used;
    }
    parts
}

/// One widget of class `class` at `depth` in `bounds`.
fn widget(rng: &mut Rng, class: &str, depth: usize, bounds: Bounds, package: &str) -> AndroidNode {
    let simple = class.rsplit('.').next().unwrap_or(class);
    let mut node = AndroidNode {
        depth,
        class: class.into(),
        package: package.into(),
        bounds: Some(bounds),
        ..AndroidNode::default()
    };
    if rng.chance(0.6) {
        let name = ID_WORDS[rng.below(ID_WORDS.len())];
        node.resource_id = if rng.chance(0.3) {
            format!("{package}:id/{name}_{}", 1 + rng.below(9))
        } else {
            format!("{package}:id/{name}")
        };
    }
    let clickable = NodeFlags {
        clickable: true,
        focusable: true,
        ..NodeFlags::default()
    };
    match simple {
        "TextView" => {
            node.text = some_text(rng);
            node.flags.clickable = rng.chance(0.2);
        }
        "Button" => {
            node.text = some_text(rng);
            node.flags = clickable;
            node.flags.enabled = !rng.chance(0.1);
        }
        "ImageView" | "ImageButton" | "View" => {
            if rng.chance(0.6) {
                node.content_desc = some_text(rng);
            }
            if simple == "ImageButton" || rng.chance(0.3) {
                node.flags = clickable;
            }
        }
        "EditText" => {
            if rng.chance(0.6) {
                node.text = some_text(rng);
            }
            node.flags = NodeFlags {
                long_clickable: true,
                focused: rng.chance(0.1),
                ..clickable
            };
        }
        "Switch" | "CheckBox" => {
            node.text = some_text(rng);
            node.flags = NodeFlags {
                checkable: true,
                checked: rng.chance(0.5),
                ..clickable
            };
        }
        _ => {}
    }
    node
}

/// A made-up screen (see the module docs): a root window of 1080 × 1920–2400 pixels and
/// 4 to 51 nodes, in pre-order.
pub fn synthetic_screen(rng: &mut Rng) -> AndroidTree {
    let package = format!(
        "com.{}.{}",
        PACKAGE_WORDS[rng.below(PACKAGE_WORDS.len())],
        PACKAGE_WORDS[rng.below(PACKAGE_WORDS.len())]
    );
    let (width, height) = (1080, [1920, 2160, 2340, 2400][rng.below(4)]);
    let root_class = pick_weighted(rng, &CONTAINERS[..3]);
    let mut nodes = vec![AndroidNode {
        depth: 0,
        class: root_class.into(),
        package: package.clone(),
        bounds: Some(Bounds {
            left: 0,
            top: 0,
            right: width,
            bottom: height,
        }),
        ..AndroidNode::default()
    }];
    // Four screens in ten nest the content in a chain of full-screen containers.
    let screen = nodes[0].bounds;
    let chain = if rng.chance(0.4) { 1 + rng.below(5) } else { 0 };
    for depth in 1..=chain {
        let class = if rng.chance(0.6) {
            "android.view.View"
        } else {
            pick_weighted(rng, &CONTAINERS)
        };
        let mut wrapper = AndroidNode {
            depth,
            class: class.into(),
            package: package.clone(),
            bounds: screen,
            ..AndroidNode::default()
        };
        wrapper.flags.focusable = rng.chance(0.2);
        if depth == chain && rng.chance(0.3) {
            wrapper.content_desc = two_lines(rng);
            wrapper.flags.focused = true;
            wrapper.flags.focusable = true;
        }
        nodes.push(wrapper);
    }
    let d = chain; // depth of the content's parent
    let top = [0, 63, 84, 126][rng.below(4)];
    let rows = 3 + rng.below(7);
    let mut y = top;
    for h in split(rng, height - top, rows) {
        let row = Bounds {
            left: 0,
            top: y,
            right: width,
            bottom: y + h,
        };
        y += h;
        if rng.chance(0.35) {
            let class = pick_weighted(rng, &CONTAINERS);
            let mut group = widget(rng, class, d + 1, row, &package);
            group.text.clear();
            group.content_desc.clear();
            nodes.push(group);
            let n = 2 + rng.below(3);
            // One group in four is a tab bar: "<label>\nTab i of n", one tab selected.
            let tabs = rng.chance(0.25);
            let selected = rng.below(n);
            let mut x = 0;
            for (i, w) in split(rng, width, n).into_iter().enumerate() {
                let cell = Bounds {
                    left: x,
                    top: row.top,
                    right: x + w,
                    bottom: row.bottom,
                };
                x += w;
                if tabs {
                    let mut tab = widget(rng, "android.widget.Button", d + 2, cell, &package);
                    tab.text.clear();
                    tab.content_desc = format!("{}\nTab {} of {n}", one_line(rng), i + 1);
                    tab.flags.enabled = true;
                    tab.flags.selected = i == selected;
                    nodes.push(tab);
                } else {
                    let class = pick_weighted(rng, &WIDGETS);
                    nodes.push(widget(rng, class, d + 2, cell, &package));
                }
            }
        } else {
            let class = pick_weighted(rng, &WIDGETS);
            nodes.push(widget(rng, class, d + 1, row, &package));
        }
    }
    AndroidTree {
        nodes,
        ..AndroidTree::default()
    }
}
