//! The stage: the current state drawn for its domain, and after a step the state before and
//! the predicted state side by side, what changed highlighted on both, plus the change list.
//! Clicking a node of the current state composes an action on it.

use std::collections::{HashMap, HashSet};

use agentworld_world::Domain;
use agentworld_world::state::StateTree;
use leptos::prelude::*;

use crate::ctx::Ctx;
use crate::model::{self, Changes, Mark, Parsed};
use crate::views::page::Page;
use crate::views::screen::{Frame, Screen};
use crate::views::terminal::Terminal;
use crate::views::tree::TreeView;

/// The action a click on node `i` of the current state makes, or why there is none.
fn action_for(domain: Domain, tree: &StateTree, i: usize) -> Result<String, String> {
    match domain {
        Domain::Android => {
            model::android_tap(tree, i).ok_or_else(|| "this node has no bounds".into())
        }
        Domain::Web => model::web_click(tree, i)
            .ok_or_else(|| "this element has no bid: pick one that has (#… in the tree)".into()),
        _ => {
            let b = tree
                .nodes
                .get(i)
                .and_then(|n| n.bounds)
                .ok_or("this node has no bounds")?;
            Ok(format!(
                "pyautogui.click({}, {})",
                (b.left + b.right) / 2,
                (b.top + b.bottom) / 2
            ))
        }
    }
}

/// One side of the comparison.
#[derive(Clone, PartialEq)]
struct Side {
    text: String,
    parsed: Parsed,
    marks: HashMap<usize, Mark>,
    open: HashSet<usize>,
    /// Whether this side is the current state (clicks compose actions).
    current: bool,
}

/// Draws one side for the domain.
fn side_view(ctx: Ctx, domain: Domain, side: Side, name: &'static str, pair: bool) -> AnyView {
    let tree = side.parsed.tree.clone();
    let selected: Signal<Option<usize>> = if side.current {
        ctx.selected.into()
    } else {
        Signal::derive(|| None)
    };
    let pick_tree = tree.clone();
    let current = side.current;
    let on_pick = Callback::new(move |i: usize| {
        if !current {
            return;
        }
        let Some(t) = &pick_tree else { return };
        ctx.selected.set(Some(i));
        match action_for(domain, t, i) {
            Ok(a) => {
                ctx.action.set(a);
                ctx.error.set(None);
            }
            Err(e) => ctx.error.set(Some(e)),
        }
    });
    let notes = side.parsed.notes.clone();
    let notes = (!notes.is_empty()).then(|| {
        view! {
            <details class="parse-notes">
                <summary>{format!("{} note(s) from reading the state", notes.len())}</summary>
                <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
            </details>
        }
    });
    let body = match (domain, tree) {
        (Domain::Terminal, _) => {
            let class = if name == "before" { "removed" } else { "added" };
            let lines: HashSet<usize> = side.marks.keys().copied().collect();
            view! { <Terminal text=side.text.clone() changed=lines class=class testid=format!("terminal-{name}") /> }
                .into_any()
        }
        (Domain::Web, tree) => {
            let sel = if side.current {
                ctx.selected.get_untracked()
            } else {
                None
            };
            let tree_view = tree.clone().map(|t| {
                view! { <TreeView tree=t marks=side.marks.clone() open_along=side.open.clone() on_pick=on_pick selected=selected testid=format!("tree-{name}") /> }
            });
            view! {
                <Page text=side.text.clone() tree=tree marks=side.marks.clone() selected=sel testid=format!("page-{name}") />
                <details class="dom" open=true><summary>"DOM tree (click an element with a bid)"</summary>{tree_view}</details>
            }
            .into_any()
        }
        (d, Some(t)) => {
            let frame = if d == Domain::Android {
                Frame::Phone
            } else {
                Frame::Desktop
            };
            let width = match (frame, pair) {
                (Frame::Phone, _) => 300.0,
                (Frame::Desktop, false) => 820.0,
                (Frame::Desktop, true) => 470.0,
            };
            view! {
                <div class="screen-row">
                    <Screen tree=t.clone() frame=frame marks=side.marks.clone() on_pick=on_pick selected=selected width=width testid=format!("screen-{name}") />
                    <details class="hier" open=frame == Frame::Phone><summary>"Hierarchy"</summary>
                        <TreeView tree=t marks=side.marks.clone() open_along=side.open.clone() on_pick=on_pick selected=selected testid=format!("tree-{name}") />
                    </details>
                </div>
            }
            .into_any()
        }
        (_, None) => {
            view! { <pre class="raw" data-testid=format!("raw-{name}")>{side.text.clone()}</pre> }
                .into_any()
        }
    };
    let heading = match name {
        "before" if side.current => "current state",
        "before" => "before",
        _ => "after (predicted)",
    };
    view! {
        <div class=format!("side {name}")>
            <h3>{heading}</h3>
            {notes}
            {body}
        </div>
    }
    .into_any()
}

/// The stage.
#[component]
pub fn Stage() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // (before, after): after a finished step whose prediction is still the current state, the
    // step's two states; otherwise the current state alone.
    let texts = Memo::new(move |_| {
        let state = ctx.state.get();
        if ctx.running.get() {
            return (ctx.run_before.get(), None);
        }
        ctx.session.with(|s| match s.steps.last() {
            Some(last) if last.observation == state => {
                (last.state_before.clone(), Some(last.observation.clone()))
            }
            _ => (state, None),
        })
    });
    let sides = Memo::new(move |_| {
        let domain = ctx.domain.get();
        let (before, after) = texts.get();
        let pb = model::parse(domain, &before);
        let pa = after.as_deref().map(|a| model::parse(domain, a));
        let mut changes = Changes::default();
        let mut lines = (HashSet::new(), HashSet::new());
        match (&pb.tree, pa.as_ref().and_then(|p| p.tree.as_ref())) {
            (Some(b), Some(a)) => changes = model::changes(b, a),
            _ if domain == Domain::Terminal && after.is_some() => {
                lines = model::changed_lines(&before, after.as_deref().unwrap_or(""));
            }
            _ => {}
        }
        let as_marks = |s: &HashSet<usize>, m: Mark| s.iter().map(|&i| (i, m)).collect();
        let (bm, am): (HashMap<usize, Mark>, HashMap<usize, Mark>) = if domain == Domain::Terminal {
            (
                as_marks(&lines.0, Mark::Removed),
                as_marks(&lines.1, Mark::Inserted),
            )
        } else {
            (changes.before.clone(), changes.after.clone())
        };
        let open_b = pb
            .tree
            .as_ref()
            .map(|t| changes.before_ancestors(t))
            .unwrap_or_default();
        let open_a = pa
            .as_ref()
            .and_then(|p| p.tree.as_ref())
            .map(|t| changes.after_ancestors(t))
            .unwrap_or_default();
        let has_after = after.is_some();
        let b = Side {
            text: before,
            parsed: pb,
            marks: bm,
            open: open_b,
            current: !has_after && !ctx.running.get(),
        };
        let a = after.zip(pa).map(|(text, parsed)| Side {
            text,
            parsed,
            marks: am,
            open: open_a,
            current: true,
        });
        (b, a, changes)
    });
    view! {
        <div class="stage" data-testid="stage">
            {move || {
                let domain = ctx.domain.get();
                let (b, a, changes) = sides.get();
                let has_after = a.is_some();
                let pending = ctx.running.get().then(|| view! {
                    <div class="side after pending"><h3>"after"</h3><p>"the model is writing the next state…"</p></div>
                });
                let summary = (has_after && domain != Domain::Terminal).then(|| {
                    let lines = changes.lines.clone();
                    view! {
                        <details class="changes" data-testid="changes" open=true>
                            <summary>{format!("What changed: {}", changes.summary)}</summary>
                            <ul>{lines.into_iter().map(|l| view! { <li><code>{l}</code></li> }).collect_view()}</ul>
                            {changes.warnings.iter().map(|w| view! { <p class="note">{w.clone()}</p> }).collect_view()}
                        </details>
                    }
                });
                view! {
                    <div class="sides" class:pair=has_after>
                        {side_view(ctx, domain, b, "before", has_after || ctx.running.get())}
                        {pending}
                        {a.map(|a| side_view(ctx, domain, a, "after", true))}
                    </div>
                    {summary}
                }
            }}
        </div>
    }
}
