//! A terminal screen: the text on a dark console, changed lines highlighted.

use std::collections::HashSet;

use leptos::prelude::*;

/// `text` as a terminal screen; lines in `changed` (0-based) get `class`.
#[component]
pub fn Terminal(
    /// The screen text.
    text: String,
    /// Lines to highlight.
    changed: HashSet<usize>,
    /// Their class (`added` or `removed`).
    class: &'static str,
    /// `data-testid` of the screen.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let c = if changed.contains(&i) { class } else { "" };
            view! { <div class=format!("tl {c}")>{l.to_string()}"\u{200b}"</div> }
        })
        .collect_view();
    view! { <div class="terminal" data-testid=testid>{lines}</div> }
}
