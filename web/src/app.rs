//! The page: the layout, its controls wired to the step loop ([`crate::step`]) over the shared
//! state ([`crate::ctx::Ctx`]).

use leptos::prelude::*;

use crate::compose::Composer;
use crate::ctx::Ctx;
use crate::examples::DOMAINS;
use crate::stage::Stage;
use crate::step::{self, connect};
use crate::teach::Teach;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let ctx = Ctx::new();
    provide_context(ctx);
    connect(ctx);
    let domain_buttons = DOMAINS
        .iter()
        .map(|&d| {
            view! {
                <button
                    class="tab"
                    class:on=move || ctx.domain.get() == d
                    data-testid=format!("domain-{}", d.as_str())
                    on:click=move |_| {
                        ctx.set_domain(d);
                        if let Some((i, _)) = crate::examples::of(d).next() {
                            ctx.load_example(i);
                        }
                    }
                >
                    {d.as_str()}
                </button>
            }
        })
        .collect_view();
    let export = move || {
        let s = ctx.session.get();
        let jsonl = s.to_jsonl("playground");
        format!(
            "data:application/jsonl;charset=utf-8,{}",
            String::from(js_sys::encode_uri_component(&jsonl))
        )
    };
    view! {
        <header>
            <h1>"agentworld " <span>"playground"</span></h1>
            <p class="lede">
                "A world model predicts what an environment does next. Give it a state and an action; it thinks, then writes the next state."
            </p>
            <div class="engine">
                <label>"server "
                    <input
                        placeholder="this page's origin"
                        prop:value=move || ctx.base.get()
                        on:change=move |ev| { ctx.base.set(event_target_value(&ev)); connect(ctx); }
                    />
                </label>
                <label>"model "
                    <input prop:value=move || ctx.model.get() on:change=move |ev| ctx.model.set(event_target_value(&ev)) />
                </label>
                <label title="run the demo model in this page (WebGPU, else the CPU) instead of on the server">
                    <input type="checkbox" data-testid="in-browser" prop:checked=move || ctx.in_browser.get()
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            ctx.in_browser.set(on);
                            if on { crate::local::start(ctx); }
                        } />
                    " in this page"
                </label>
                <span class="status" data-testid="local-status">{move || ctx.local_status.get()}</span>
                <span class="status" data-testid="status">
                    {move || if ctx.running.get() { "running…".to_string() } else { format!("{} step(s)", ctx.session.with(|s| s.steps.len())) }}
                </span>
            </div>
        </header>
        <nav class="domains">{domain_buttons}</nav>
        {move || ctx.error.get().map(|e| view! { <p class="error" data-testid="error">{e}</p> })}
        {move || {
            let n = ctx.notes.get();
            (!n.is_empty()).then(|| view! { <ul class="notes">{n.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ul> })
        }}
        <main>
            <section class="controls">
                <Composer />
                <div class="run">
                    <button class="primary" data-testid="run" disabled=move || ctx.running.get() on:click=move |_| step::run(ctx)>"Run step ▶"</button>
                    <button disabled=move || !ctx.running.get() on:click=move |_| step::stop(ctx)>"Stop"</button>
                    <button data-testid="undo" disabled=move || ctx.running.get() || ctx.session.with(|s| s.steps.is_empty()) on:click=move |_| ctx.undo()>"Undo"</button>
                    <a class="button" download="trajectory.jsonl" href=export data-testid="export">"Export JSONL"</a>
                </div>
                <ol class="steps" data-testid="steps">
                    {move || ctx.session.get().steps.into_iter().map(|s| view! {
                        <li><code>{crate::views::tree::clip(&s.action, 80)}</code></li>
                    }).collect_view()}
                </ol>
            </section>
            <section class="stage-wrap">
                <Stage />
                <div class="stream">
                    <div>
                        <h3>"Thinking"</h3>
                        <pre class="thinking" data-testid="thinking">{move || ctx.thinking.get()}</pre>
                    </div>
                    <div>
                        <h3>"Answer (the predicted observation is taken from it)"</h3>
                        <pre class="output" data-testid="output">{move || ctx.output.get()}</pre>
                    </div>
                </div>
            </section>
        </main>
        <Teach />
    }
}
