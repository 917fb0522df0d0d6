//! The MoE view: for each generated token, which experts each layer's router chose (a heatmap,
//! from the in-browser engine's routing reports), and how expert use differs between domains
//! (the demo model's `routing.json`, plus this session's steps counted live). Data in
//! [`crate::routing`].

use leptos::prelude::*;

use crate::ctx::Ctx;
use crate::routing::{DomainExperts, distance, heatmap};

/// Most tokens drawn in the heatmap (the latest ones).
const MAX_COLUMNS: usize = 160;
/// Beyond this many experts per layer the heatmap lists ids instead of drawing a row each.
const MAX_EXPERT_ROWS: usize = 64;

fn mixer(layer_types: &[String], layer: usize) -> &'static str {
    match layer_types.get(layer).map(String::as_str) {
        Some("linear_attention") => "Gated DeltaNet",
        Some("full_attention") => "full attention",
        _ => "",
    }
}

/// The heatmap of the latest step's generated tokens.
#[component]
fn Heatmap() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    move || {
        let routes = ctx.routes.get();
        if routes.is_empty() {
            return view! {
                <p class="note">
                    "Run a step " <b>"in this page"</b>
                    " to see which experts each layer chose for every generated token: the in-browser engine reports its router's choices; a server does not."
                </p>
            }
            .into_any();
        }
        let profile = ctx.profile.get_untracked().unwrap_or_default();
        let layers = routes[0].experts.len();
        let experts = profile.experts.max(
            routes
                .iter()
                .flat_map(|r| r.experts.iter().flatten())
                .map(|&e| e as usize + 1)
                .max()
                .unwrap_or(0),
        );
        let skip = routes.len().saturating_sub(MAX_COLUMNS);
        let shown = &routes[skip..];
        let grid = heatmap(shown, layers, experts);
        let tokens: Vec<String> = shown.iter().map(|r| format!("{:?}", r.text)).collect();
        let blocks = grid
            .into_iter()
            .enumerate()
            .map(|(layer, rows)| {
                let body = if experts <= MAX_EXPERT_ROWS {
                    rows.into_iter()
                        .enumerate()
                        .map(|(e, cells)| {
                            let cells = cells
                                .into_iter()
                                .zip(&tokens)
                                .map(|(w, tok)| {
                                    let (class, style, title) = if w > 0.0 {
                                        (
                                            "cell on",
                                            format!("opacity:{:.2}", 0.25 + 0.75 * w),
                                            format!("{tok}: expert {e}, weight {w:.2}"),
                                        )
                                    } else {
                                        ("cell", String::new(), tok.clone())
                                    };
                                    view! { <span class=class style=style title=title></span> }
                                })
                                .collect_view();
                            view! { <div class="hrow"><span class="hlabel">{format!("e{e}")}</span>{cells}</div> }
                        })
                        .collect_view()
                        .into_any()
                } else {
                    let ids = shown
                        .iter()
                        .map(|r| {
                            let chosen = r.experts.get(layer).cloned().unwrap_or_default();
                            format!("{}: {chosen:?}", r.text)
                        })
                        .collect::<Vec<_>>()
                        .join("  ");
                    view! { <pre class="ids">{ids}</pre> }.into_any()
                };
                view! {
                    <div class="hlayer">
                        <b>{format!("layer {layer} · {}", mixer(&profile.layer_types, layer))}</b>
                        {body}
                    </div>
                }
            })
            .collect_view();
        view! {
            <p class="note">
                {format!(
                    "{} generated tokens{} (columns, left to right); a row per expert; a filled cell is an expert the router chose for that token, darker for a larger weight. Hover a cell for the token.",
                    routes.len(),
                    if skip > 0 { format!(", the last {MAX_COLUMNS} shown") } else { String::new() }
                )}
            </p>
            <div class="heatmap" data-testid="moe-heatmap">{blocks}</div>
        }
        .into_any()
    }
}

/// One table per layer: a row per domain, a cell per expert shaded by its share.
fn domain_tables(
    domains: &[DomainExperts],
    layer_types: &[String],
    testid: &'static str,
) -> AnyView {
    let layers = domains.iter().map(|d| d.share.len()).max().unwrap_or(0);
    let tables = (0..layers)
        .map(|layer| {
            let rows = domains
                .iter()
                .map(|d| {
                    let share = d.share.get(layer).cloned().unwrap_or_default();
                    let top = share.iter().copied().fold(0.0, f64::max).max(1e-9);
                    let cells = share
                        .iter()
                        .enumerate()
                        .map(|(e, s)| {
                            let style = format!("opacity:{:.2}", 0.08 + 0.92 * s / top);
                            let title = format!("{}: expert {e}, {:.1}% of choices", d.domain, 100.0 * s);
                            view! { <span class="cell on" style=style title=title></span> }
                        })
                        .collect_view();
                    view! { <div class="hrow"><span class="hlabel wide">{d.domain.clone()}</span>{cells}</div> }
                })
                .collect_view();
            let gaps: Vec<String> = domains
                .iter()
                .enumerate()
                .flat_map(|(i, a)| domains[i + 1..].iter().map(move |b| (a, b)))
                .filter_map(|(a, b)| {
                    let d = distance(a.share.get(layer)?, b.share.get(layer)?);
                    Some(format!("{}–{} {d:.2}", a.domain, b.domain))
                })
                .collect();
            view! {
                <div class="hlayer">
                    <b>{format!("layer {layer} · {}", mixer(layer_types, layer))}</b>
                    {rows}
                    <span class="gap">{if gaps.is_empty() { String::new() } else { format!("distance {}", gaps.join(", ")) }}</span>
                </div>
            }
        })
        .collect_view();
    view! { <div class="heatmap" data-testid=testid>{tables}</div> }.into_any()
}

/// The MoE panel.
#[component]
pub fn Moe() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let measured = move || {
        let Some(u) = ctx.expert_use.get() else {
            return view! { <p class="note">"(no routing.json beside the demo model)"</p> }
                .into_any();
        };
        let counted: Vec<String> = u
            .domains
            .iter()
            .map(|d| format!("{} ({} tokens)", d.domain, d.tokens))
            .collect();
        view! {
            <p class="note">
                {format!(
                    "Measured on held-out rows by `agentworld eval routing`: {}. Each cell is an expert's share of the layer's choices in that domain; distance is the total-variation distance between two domains' shares (0 same experts, 1 disjoint).",
                    counted.join(", ")
                )}
            </p>
            {domain_tables(&u.domains, &u.layer_types, "moe-domains")}
        }
        .into_any()
    };
    let live = move || {
        let domains = ctx.usage.with(|u| u.domains());
        if domains.is_empty() {
            return ().into_any();
        }
        let layer_types = ctx.profile.get().map(|p| p.layer_types).unwrap_or_default();
        view! {
            <h4>"This session's steps (in this page)"</h4>
            {domain_tables(&domains, &layer_types, "moe-session")}
        }
        .into_any()
    };
    view! {
        <h3>"Mixture of experts: who computes each token"</h3>
        <Heatmap />
        <h4>"Expert use by domain"</h4>
        {measured}
        {live}
    }
}
