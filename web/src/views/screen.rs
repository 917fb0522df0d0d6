//! A screen drawn from a state tree with bounds: an Android phone frame or an OS desktop.
//! Every node with a non-empty rectangle is a box at its bounds (scaled), later nodes on top,
//! so a click lands on the node drawn there; zero-size nodes are not drawn.

use std::collections::HashMap;

use agentworld_world::state::{StateNode, StateTree};
use leptos::prelude::*;

use crate::model::Mark;
use crate::views::tree::clip;

/// Which kind of screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A phone: rounded frame, status bar.
    Phone,
    /// A desktop: windows with title bars.
    Desktop,
}

/// Whether flag `name` is set (`name="true"`, or AT-SPI `st:name="true"`).
fn flag(n: &StateNode, name: &str) -> bool {
    n.attr(name) == Some("true") || n.attr(&format!("st:{name}")) == Some("true")
}

/// CSS classes of a node: its kind (from the role) and its flags.
fn classes(n: &StateNode, frame: Frame) -> String {
    let role = n.role.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    let kind = match frame {
        Frame::Phone => match role.as_str() {
            r if r.contains("switch") || r.contains("checkbox") || r.contains("radio") => {
                "k-toggle"
            }
            r if r.contains("edittext")
                || r.contains("searchview")
                || r.contains("autocomplete") =>
            {
                "k-edit"
            }
            r if r.contains("button") => "k-button",
            r if r.contains("image") => "k-image",
            r if r.contains("textview") => "k-text",
            _ => "k-box",
        },
        Frame::Desktop => match role.as_str() {
            "frame" | "window" | "dialog" | "alert" => "k-window",
            r if r.contains("button") => "k-button",
            r if r.contains("menu") => "k-menu",
            "text" | "entry" | "password-text" | "document-text" => "k-edit",
            "label" | "static" | "heading" => "k-text",
            "panel" | "status-bar" | "tool-bar" | "page-tab-list" => "k-bar",
            r if r.contains("tab") => "k-tab",
            _ => "k-box",
        },
    };
    let mut c = format!("node {kind}");
    for f in [
        "checked",
        "focused",
        "clickable",
        "selected",
        "checkable",
        "editable",
    ] {
        if flag(n, f) {
            c.push(' ');
            c.push_str(f);
        }
    }
    if n.attr("enabled") == Some("false") || n.attr("st:enabled") == Some("false") {
        c.push_str(" disabled");
    }
    c
}

/// The screen size: the union of all bounds (at least 1×1).
fn extent(tree: &StateTree) -> (i32, i32) {
    let mut w = 1;
    let mut h = 1;
    for b in tree.nodes.iter().filter_map(|n| n.bounds) {
        w = w.max(b.right);
        h = h.max(b.bottom);
    }
    (w, h)
}

/// The screen of `tree`, `width` CSS pixels wide.
#[component]
pub fn Screen(
    /// The state's tree.
    tree: StateTree,
    /// Phone or desktop.
    frame: Frame,
    /// Change marks per node.
    marks: HashMap<usize, Mark>,
    /// Called with the clicked node.
    on_pick: Callback<usize>,
    /// The selected node.
    #[prop(into)]
    selected: Signal<Option<usize>>,
    /// Width of the drawn screen in CSS pixels.
    width: f64,
    /// `data-testid` of the screen.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let (w, h) = extent(&tree);
    let scale = width / w as f64;
    let height = (h as f64 * scale).min(width * 3.0);
    let boxes = tree
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let b = n.bounds?;
            if b.width() == 0 || b.height() == 0 {
                return None;
            }
            let mark = marks.get(&i).map(|m| m.as_str()).unwrap_or("");
            let style = format!(
                "left:{:.1}px;top:{:.1}px;width:{:.1}px;height:{:.1}px",
                b.left as f64 * scale,
                b.top as f64 * scale,
                b.width() as f64 * scale,
                b.height() as f64 * scale
            );
            let shown = if !n.text.is_empty() {
                clip(&n.text, 120)
            } else {
                clip(&n.name, 120)
            };
            let desc = n.text.is_empty() && !n.name.is_empty();
            let toggle = (frame == Frame::Phone && flag(n, "checkable"))
                .then(|| if flag(n, "checked") { "◉ " } else { "○ " });
            let title = format!("{} {}", n.role, n.key.value);
            Some(view! {
                <div
                    class=format!("{} {mark}", classes(n, frame))
                    class:sel=move || selected.get() == Some(i)
                    style=style
                    title=title
                    data-node=i
                    on:click=move |ev| {
                        ev.stop_propagation();
                        on_pick.run(i);
                    }
                >
                    <span class="t" class:desc=desc>{toggle}{shown}</span>
                </div>
            })
        })
        .collect_view();
    let class = match frame {
        Frame::Phone => "screen phone",
        Frame::Desktop => "screen desktop",
    };
    view! {
        <div class=class data-testid=testid>
            <div class="glass" style=format!("width:{width:.0}px;height:{height:.0}px")>{boxes}</div>
        </div>
    }
}
