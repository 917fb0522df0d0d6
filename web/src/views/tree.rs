//! A collapsible tree of a state (any format), with changed nodes highlighted. Drawn as a flat
//! list of rows (no recursion), each indented by its depth; a row hides when an ancestor is
//! folded.

use std::collections::{HashMap, HashSet};

use agentworld_world::state::StateTree;
use leptos::prelude::*;

use crate::model::Mark;

/// Trees larger than this start folded below [`FOLD_DEPTH`], except along changes.
const BIG_TREE: usize = 250;
/// The depth at which big trees start folded.
const FOLD_DEPTH: usize = 3;

/// One line of label for a node: `role #key "name" text`.
pub fn label(tree: &StateTree, i: usize) -> String {
    let n = &tree.nodes[i];
    let mut s = n.role.clone();
    if n.key.kind != agentworld_world::state::KeyKind::Path {
        s.push_str(&format!(" #{}", n.key.value));
    }
    if !n.name.is_empty() {
        s.push_str(&format!(" \"{}\"", clip(&n.name, 60)));
    }
    if !n.text.is_empty() {
        s.push_str(&format!(" {}", clip(&n.text, 80)));
    }
    s
}

/// `s` cut to `max` characters, with an ellipsis.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// The tree of `tree`. `marks` colour changed nodes, `open_along` are kept unfolded in big
/// trees, `on_pick` gets the node a row click names.
#[component]
pub fn TreeView(
    /// The state's tree.
    tree: StateTree,
    /// Change marks per node.
    marks: HashMap<usize, Mark>,
    /// Nodes that stay unfolded (ancestors of changes).
    open_along: HashSet<usize>,
    /// Called with the clicked node.
    on_pick: Callback<usize>,
    /// The selected node.
    #[prop(into)]
    selected: Signal<Option<usize>>,
    /// `data-testid` of the list.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let n = tree.len();
    let has_children: Vec<bool> = (0..n)
        .map(|i| tree.nodes.get(i + 1).is_some_and(|c| c.parent == Some(i)))
        .collect();
    let folded0: HashSet<usize> = if n > BIG_TREE {
        (0..n)
            .filter(|&i| {
                has_children[i] && tree.nodes[i].depth >= FOLD_DEPTH && !open_along.contains(&i)
            })
            .collect()
    } else {
        HashSet::new()
    };
    let folded = RwSignal::new(folded0);
    let parents: Vec<Option<usize>> = tree.nodes.iter().map(|x| x.parent).collect();
    let hidden = move |i: usize| {
        folded.with(|f| {
            let mut p = parents[i];
            while let Some(j) = p {
                if f.contains(&j) {
                    return true;
                }
                p = parents[j];
            }
            false
        })
    };
    let hidden = std::sync::Arc::new(hidden);
    let rows = (0..n)
        .map(|i| {
            let depth = tree.nodes[i].depth;
            let mark = marks.get(&i).map(|m| m.as_str()).unwrap_or("");
            let text = label(&tree, i);
            let kids = has_children[i];
            let h = hidden.clone();
            view! {
                <li
                    class=format!("row {mark}")
                    class:sel=move || selected.get() == Some(i)
                    style:padding-left=format!("{}px", 4 + depth * 14)
                    style:display=move || if h(i) { "none" } else { "" }
                    on:click=move |_| on_pick.run(i)
                >
                    {kids.then(|| view! {
                        <span
                            class="fold"
                            on:click=move |ev| {
                                ev.stop_propagation();
                                folded.update(|f| if !f.remove(&i) { f.insert(i); });
                            }
                        >
                            {move || if folded.with(|f| f.contains(&i)) { "▸" } else { "▾" }}
                        </span>
                    })}
                    <span class="lbl">{text}</span>
                </li>
            }
        })
        .collect_view();
    view! { <ul class="tree" data-testid=testid>{rows}</ul> }
}
