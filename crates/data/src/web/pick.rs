//! Choosing the next action on a page: useful edits and navigation most of the time, and
//! actions that change nothing (disabled, missing, inert elements; no focus; no history).

use super::page::{Act, Browser, Effect, Node, Target};
use super::site::{Words, value_for};
use crate::rng::Rng;

/// Roles a click does nothing on.
const INERT: [&str; 6] = ["heading", "iframe", "list", "listitem", "navigation", "img"];

/// An option label no combobox has.
const NOT_OPTIONS: [&str; 4] = ["Other", "None", "Custom", "Unknown"];

/// Text to type into `field`: a value for its label, after a space when it has text already
/// (typing appends at the end).
fn typed(field: &Node, rng: &mut Rng, w: &Words) -> String {
    let v = value_for(&field.name, rng, w);
    if field.value.as_deref().is_some_and(|s| !s.is_empty()) {
        format!(" {v}")
    } else {
        v
    }
}

/// Picks an action for the shown page; `prev` (the last step's effect) makes follow-ups
/// likely: typing after a focusing click, going back after a navigation.
pub(crate) fn pick_act(b: &Browser, prev: Option<&Effect>, rng: &mut Rng, w: &Words) -> Act {
    pick(b, prev, rng, w, false)
}

/// Picks an action that acts on a field of the page (a drill,
/// [`super::WebDataConfig::drill_share`]): fill, focus, typing, select, toggle, and the
/// no-ops that still name a field (disabled, a missing option, fill on a non-field); never a
/// navigation or a missing element.
pub(crate) fn pick_edit(b: &Browser, rng: &mut Rng, w: &Words) -> Act {
    pick(b, None, rng, w, true)
}

fn pick(b: &Browser, prev: Option<&Effect>, rng: &mut Rng, w: &Words, edits_only: bool) -> Act {
    let page = b.page();
    let nodes = &page.nodes;
    let bid = |i: usize| nodes[i].bid.clone().unwrap_or_default();
    let enabled = |role: &str| -> Vec<usize> {
        (0..nodes.len())
            .filter(|&i| nodes[i].role == role && !nodes[i].disabled && nodes[i].bid.is_some())
            .collect()
    };
    let focused = nodes
        .iter()
        .position(|n| n.focused && n.role == "textbox" && !n.disabled);
    match prev {
        Some(Effect::Focused { .. }) if focused.is_some() && rng.chance(0.85) => {
            return Act::Type(typed(&nodes[focused.unwrap_or(0)], rng, w));
        }
        Some(Effect::Navigated { .. } | Effect::Submitted { .. })
            if !b.history.is_empty() && rng.chance(0.5) =>
        {
            return Act::Back;
        }
        _ => {}
    }
    let textboxes = enabled("textbox");
    let combos = enabled("combobox");
    let checks = enabled("checkbox");
    let links: Vec<usize> = (0..nodes.len())
        .filter(|&i| {
            !nodes[i].disabled
                && nodes[i].bid.is_some()
                && matches!(nodes[i].target, Target::Page(_))
        })
        .collect();
    let submits: Vec<usize> = (0..nodes.len())
        .filter(|&i| !nodes[i].disabled && nodes[i].target == Target::Submit)
        .collect();
    let disabled: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].disabled && nodes[i].bid.is_some())
        .collect();
    let inert: Vec<usize> = (0..nodes.len())
        .filter(|&i| INERT.contains(&nodes[i].role) && nodes[i].bid.is_some())
        .collect();
    let wrong: Vec<usize> = (0..nodes.len())
        .filter(|&i| {
            !nodes[i].disabled
                && nodes[i].bid.is_some()
                && matches!(nodes[i].role, "checkbox" | "link" | "heading" | "button")
        })
        .collect();
    let w8 = |v: &[usize], w: u32| if v.is_empty() { 0 } else { w };
    let mut weights = [
        w8(&textboxes, 30),                        // 0 fill
        w8(&textboxes, 15),                        // 1 focus
        if focused.is_some() { 25 } else { 2 },    // 2 keyboard_type
        w8(&combos, 20),                           // 3 select
        w8(&combos, 2),                            // 4 select a missing option
        w8(&checks, 25),                           // 5 toggle
        w8(&links, 30),                            // 6 navigate
        w8(&submits, 10),                          // 7 submit
        if b.history.is_empty() { 2 } else { 30 }, // 8 go_back
        w8(&disabled, 8),                          // 9 disabled
        w8(&inert, 3),                             // 10 inert
        4,                                         // 11 missing bid
        w8(&wrong, 2),                             // 12 fill on a non-field
    ];
    if edits_only {
        for k in [6, 7, 8, 10, 11] {
            weights[k] = 0;
        }
        if focused.is_none() {
            weights[2] = 0;
        }
        if weights.iter().all(|&x| x == 0) {
            weights[11] = 1; // no field to act on: a missing bid, the one no-op left
        }
    }
    let one = |v: &[usize], rng: &mut Rng| v[rng.below(v.len())];
    match rng.weighted(&weights) {
        0 => {
            let i = one(&textboxes, rng);
            Act::Fill(bid(i), value_for(&nodes[i].name, rng, w))
        }
        1 => Act::Click(bid(one(&textboxes, rng))),
        2 => match focused {
            Some(i) => Act::Type(typed(&nodes[i], rng, w)),
            None => Act::Type(value_for("", rng, w)),
        },
        3 => {
            let i = one(&combos, rng);
            let opts: Vec<&str> = (i + 1..nodes.len())
                .take_while(|&j| nodes[j].depth > nodes[i].depth)
                .filter(|&j| nodes[j].role == "option")
                .map(|j| nodes[j].name.as_str())
                .collect();
            let other: Vec<&str> = opts
                .iter()
                .copied()
                .filter(|o| Some(*o) != nodes[i].value.as_deref())
                .collect();
            let choice = rng
                .pick(if other.is_empty() { &opts } else { &other })
                .copied()
                .unwrap_or("Other");
            Act::Select(bid(i), choice.to_string())
        }
        4 => {
            let i = one(&combos, rng);
            let o = NOT_OPTIONS[rng.below(NOT_OPTIONS.len())];
            Act::Select(bid(i), o.to_string())
        }
        5 => Act::Click(bid(one(&checks, rng))),
        6 => Act::Click(bid(one(&links, rng))),
        7 => Act::Click(bid(one(&submits, rng))),
        8 => Act::Back,
        9 => {
            let i = one(&disabled, rng);
            if nodes[i].role == "textbox" && rng.chance(0.6) {
                Act::Fill(bid(i), value_for(&nodes[i].name, rng, w))
            } else {
                Act::Click(bid(i))
            }
        }
        10 => Act::Click(bid(one(&inert, rng))),
        12 => {
            let i = one(&wrong, rng);
            Act::Fill(bid(i), value_for("", rng, w))
        }
        _ => {
            let top = nodes
                .iter()
                .filter_map(|n| n.bid.as_deref()?.parse::<usize>().ok())
                .max()
                .unwrap_or(0);
            let missing = (top + 1 + rng.below(20)).to_string();
            if rng.chance(0.7) {
                Act::Click(missing)
            } else {
                Act::Fill(missing, value_for("", rng, w))
            }
        }
    }
}
