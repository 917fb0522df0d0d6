//! A web state: the page in a sandboxed iframe (`sandbox=""`: no scripts, an opaque origin),
//! rebuilt safe by [`crate::sanitize`], changed elements outlined. States that are not HTML
//! (accessibility trees, element lists) are shown as text in the same kind of frame.

use agentworld_world::state::StateTree;
use leptos::prelude::*;

use crate::model::Mark;
use crate::sanitize::{Marks, srcdoc};

/// The escaped text of a non-HTML state as a document.
fn text_doc(text: &str) -> String {
    let mut out = String::from(
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <pre style=\"white-space:pre-wrap;font:12px monospace\">",
    );
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out.push_str("</pre>");
    out
}

/// A page in a sandboxed frame, with what was made inert said under it.
#[component]
pub fn Page(
    /// The state text.
    text: String,
    /// Its tree, when it was read.
    tree: Option<StateTree>,
    /// Change marks per node.
    marks: std::collections::HashMap<usize, Mark>,
    /// The selected node.
    selected: Option<usize>,
    /// `data-testid` of the frame.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let (doc, note) = match tree.as_ref().filter(|t| t.format == "html") {
        Some(t) => {
            let m: Marks = marks.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (doc, report) = srcdoc(t, &m, selected);
            (doc, (!report.is_clean()).then(|| report.summary()))
        }
        None => (text_doc(&text), None),
    };
    // One frame element per document, never a frame navigated from one `srcdoc` to the next:
    // Chromium (seen in 156) commits the first of two `srcdoc`s set a few milliseconds apart and
    // drops the second, which a domain switch does (the old state, then the fetched example).
    // Keyed on the document, a new document replaces the element rather than rebuilding it.
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        doc.hash(&mut h);
        h.finish()
    };
    view! {
        <For
            each=move || [(key, doc.clone())]
            key=|(k, _)| *k
            children=move |(_, doc)| {
                view! { <iframe class="page" sandbox="" srcdoc=doc data-testid=testid.clone() title="page"></iframe> }
            }
        />
        {note.map(|n| view! { <p class="note inert">{n}</p> })}
    }
}
