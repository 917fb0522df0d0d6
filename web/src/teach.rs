//! The teaching panel: the loop (state + action → world model → predicted state → next
//! action) on the live example, the exact messages sent, and the model's layers.

use leptos::prelude::*;

use crate::ctx::Ctx;
use crate::moe::Moe;
use crate::views::tree::clip;

/// The panel.
#[component]
pub fn Teach() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let turn = move || ctx.session.with(|s| s.steps.len() + 1);
    let messages = move || {
        let session = ctx.session.get();
        let state = ctx.state.get();
        let action = ctx.action.get();
        let prompt = session.next_prompt(&action, &state, &state);
        let mut s = session;
        s.system = ctx.system.get();
        s.messages(&prompt)
            .into_iter()
            .map(|m| {
                let role = format!("{:?}", m.role).to_lowercase();
                view! { <div class=format!("msg {role}")><b>{role.clone()}</b><pre>{clip(&m.content, 3000)}</pre></div> }
            })
            .collect_view()
    };
    let layers = move || {
        let Some(p) = ctx.profile.get() else {
            return view! { <p>"(the demo model's config.json was not found next to the app)"</p> }
                .into_any();
        };
        let cells = p
            .layer_types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (class, what) = if t == "linear_attention" {
                    ("layer deltanet", "Gated DeltaNet")
                } else {
                    ("layer attention", "full attention")
                };
                view! {
                    <div class=class title=t.clone()>
                        <b>{format!("layer {i}")}</b>
                        <span>{what}</span>
                        <span class="moe">{format!("MoE: {} of {} experts + shared", p.experts_per_token, p.experts)}</span>
                    </div>
                }
            })
            .collect_view();
        view! {
            <div class="layers" data-testid="layers">{cells}</div>
            <p class="note">
                "Gated DeltaNet layers keep a fixed-size recurrent state (linear attention: cost per token does not grow with the history); "
                "full-attention layers look back at every earlier token through a KV cache. Every layer ends in a mixture of experts: a router picks "
                {p.experts_per_token} " of " {p.experts} " expert MLPs per token, plus one shared expert."
            </p>
        }
        .into_any()
    };
    view! {
        <section class="teach" data-testid="teach">
            <h2>"How it works"</h2>
            <div class="loop">
                <div class="box">
                    <b>"state"</b>
                    <span>{move || {
                        let s = ctx.state.get();
                        format!("{} lines of {}", s.lines().count(), ctx.domain.get().as_str())
                    }}</span>
                </div>
                <div class="arrow">"+"</div>
                <div class="box"><b>"action"</b><code>{move || clip(&ctx.action.get(), 60)}</code></div>
                <div class="arrow">"→"</div>
                <div class="box model"><b>"world model"</b><span>{move || {
                    let m = ctx.model.get();
                    if m.is_empty() { "(no server)".to_string() } else { m }
                }}</span></div>
                <div class="arrow">"→"</div>
                <div class="box"><b>"predicted state"</b><span>{move || format!("turn {}", turn())}</span></div>
                <div class="arrow">"↺"</div>
                <div class="box"><b>"next action"</b><span>"the agent (you) acts on it"</span></div>
            </div>
            <p>
                "The model never touches a real phone, browser or shell: it reads the history and the current state as text, reasons inside "
                <code>"<think>"</code> ", and writes the next state inside " <code>"<predicted_observation>"</code>
                ". Agents can then be trained against it instead of real environments. Each step's prediction becomes the state the next action applies to; "
                "Undo goes back one step; Export writes the trajectory as AgentWorldBench rows."
            </p>
            <details>
                <summary>{move || format!("The messages the next step sends (turn {})", turn())}</summary>
                <div class="messages">{messages}</div>
            </details>
            <h3>"Inside the model"</h3>
            {layers}
            <Moe />
        </section>
    }
}
