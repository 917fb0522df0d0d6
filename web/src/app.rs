//! The page: shared state ([`Ctx`]), the layout, and the step loop (run, undo, export).

use agentworld_text::observation::{extract_observation, strip_thinking};
use agentworld_world::Domain;
use agentworld_world::diff::ObservationForm;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::AbortController;

use crate::compose::Composer;
use crate::examples::{DOMAINS, EXAMPLES};
use crate::profile::{DEMO_DIR, Profile};
use crate::remote::{self, Sampling, Target};
use crate::routing::{ExpertUse, TokenRoute, Usage};
use crate::session::{Session, Step, model_state};
use crate::sse::Event;
use crate::stage::Stage;
use crate::teach::Teach;

/// Everything the components share (all signals, so it is `Copy`).
#[derive(Clone, Copy)]
pub struct Ctx {
    /// The domain simulated.
    pub domain: RwSignal<Domain>,
    /// The current state: what the next action applies to.
    pub state: RwSignal<String>,
    /// The action to send.
    pub action: RwSignal<String>,
    /// Steps taken.
    pub session: RwSignal<Session>,
    /// Whether a request is streaming.
    pub running: RwSignal<bool>,
    /// The state the running step started from (model form).
    pub run_before: RwSignal<String>,
    /// Reasoning streamed so far.
    pub thinking: RwSignal<String>,
    /// Answer text streamed so far.
    pub output: RwSignal<String>,
    /// The last error, shown on the page.
    pub error: RwSignal<Option<String>>,
    /// Notes about the last step (conversions, unknown domain for the model).
    pub notes: RwSignal<Vec<String>>,
    /// The selected node of the shown state (its index in the tree).
    pub selected: RwSignal<Option<usize>>,
    /// Server base URL (empty: this page's origin).
    pub base: RwSignal<String>,
    /// Model name on the server (empty: its first).
    pub model: RwSignal<String>,
    /// Sampling temperature.
    pub temperature: RwSignal<f64>,
    /// Most tokens per step.
    pub max_tokens: RwSignal<usize>,
    /// The demo model's profile, once loaded.
    pub profile: RwSignal<Option<Profile>>,
    /// The system prompt of the current domain (editable).
    pub system: RwSignal<String>,
    /// Run the model in this page (a Web Worker) instead of on a server.
    pub in_browser: RwSignal<bool>,
    /// What the in-browser engine says about itself (loading, backend).
    pub local_status: RwSignal<String>,
    /// The router's choices for each token of the running (or last) in-page step.
    pub routes: RwSignal<Vec<TokenRoute>>,
    /// Expert use per domain over this session's in-page steps.
    pub usage: RwSignal<Usage>,
    /// The demo model's measured expert use per domain (`routing.json`).
    pub expert_use: RwSignal<Option<ExpertUse>>,
    /// Cancels the running request.
    abort: StoredValue<Option<AbortController>, LocalStorage>,
    /// The step being run.
    pending: StoredValue<Option<Pending>>,
}

/// What a running step needs when its answer is in.
struct Pending {
    action: String,
    sent_state: String,
    prompt: String,
    /// What the model writes (a patch applies to `sent_state`).
    form: ObservationForm,
}

impl Ctx {
    fn new() -> Ctx {
        Ctx {
            domain: RwSignal::new(Domain::Android),
            state: RwSignal::new(String::new()),
            action: RwSignal::new(String::new()),
            session: RwSignal::new(Session::new(Domain::Android, "")),
            running: RwSignal::new(false),
            run_before: RwSignal::new(String::new()),
            thinking: RwSignal::new(String::new()),
            output: RwSignal::new(String::new()),
            error: RwSignal::new(None),
            notes: RwSignal::new(Vec::new()),
            selected: RwSignal::new(None),
            base: RwSignal::new(String::new()),
            model: RwSignal::new(String::new()),
            temperature: RwSignal::new(0.0),
            max_tokens: RwSignal::new(1024),
            profile: RwSignal::new(None),
            system: RwSignal::new(agentworld_world::prompts::builtin(Domain::Android).into()),
            in_browser: RwSignal::new(false),
            local_status: RwSignal::new(String::new()),
            routes: RwSignal::new(Vec::new()),
            usage: RwSignal::new(Usage::default()),
            expert_use: RwSignal::new(None),
            abort: StoredValue::new_local(None),
            pending: StoredValue::new(None),
        }
    }

    /// The profile that applies to the chosen server model (the demo model's, by name).
    pub fn active_profile(&self) -> Option<Profile> {
        let model = self.model.get_untracked();
        self.profile
            .get_untracked()
            .filter(|p| model.is_empty() || model == p.name)
    }

    /// Switches to `domain`: a fresh session and its system prompt.
    pub fn set_domain(&self, domain: Domain) {
        self.domain.set(domain);
        let system = self
            .active_profile()
            .map(|p| p.system_prompt(domain))
            .unwrap_or_else(|| agentworld_world::prompts::builtin(domain).into());
        self.system.set(system.clone());
        self.session.set(Session::new(domain, system));
        self.selected.set(None);
        self.error.set(None);
        self.notes.set(Vec::new());
        self.thinking.set(String::new());
        self.output.set(String::new());
    }

    /// Loads example `i` (its state is fetched).
    pub fn load_example(&self, i: usize) {
        let Some(ex) = EXAMPLES.get(i).copied() else {
            return;
        };
        let ctx = *self;
        if ctx.domain.get_untracked() != ex.domain {
            ctx.set_domain(ex.domain);
        } else {
            ctx.session
                .set(Session::new(ex.domain, ctx.system.get_untracked()));
        }
        ctx.action.set(ex.action.to_string());
        spawn_local(async move {
            match remote::get_text(ex.path).await {
                Ok(text) => {
                    ctx.state.set(text);
                    ctx.selected.set(None);
                    ctx.error.set(None);
                }
                Err(e) => ctx.error.set(Some(format!("loading the example: {e}"))),
            }
        });
    }

    /// Runs one world-model step on the current state and action.
    pub fn run(&self) {
        let ctx = *self;
        if ctx.running.get_untracked() {
            return;
        }
        let domain = ctx.domain.get_untracked();
        let action = ctx.action.get_untracked();
        if action.trim().is_empty() {
            ctx.error.set(Some("compose an action first".into()));
            return;
        }
        let state = ctx.state.get_untracked();
        let profile = ctx.active_profile();
        let format = profile.as_ref().and_then(|p| p.state_format(domain));
        let (sent_state, mut notes) = model_state(domain, &state, format);
        if let Some(p) = &profile
            && !p.knows(domain)
        {
            notes.push(format!(
                "{} was trained on {} only: expect a poor {} prediction",
                p.name,
                p.domains.join(", "),
                domain.as_str()
            ));
        }
        let mut session = ctx.session.get_untracked();
        session.system = ctx.system.get_untracked();
        let prompt = session.next_prompt(&action, &state, &sent_state);
        let messages = session.messages(&prompt);
        ctx.notes.set(notes);
        ctx.error.set(None);
        ctx.thinking.set(String::new());
        ctx.output.set(String::new());
        ctx.run_before.set(sent_state.clone());
        ctx.routes.set(Vec::new());
        ctx.running.set(true);
        ctx.pending.set_value(Some(Pending {
            action,
            sent_state,
            prompt,
            form: profile
                .as_ref()
                .map_or(ObservationForm::Full, |p| p.observation_form(domain)),
        }));
        // The demo model's copy prior for this domain (its card's) in the browser. A server
        // decodes as its model's card says: `agentworld serve` of the demo model applies the
        // same prior, and more that a request's own `copy_bias` would turn off (the lines the
        // action names), so none is sent there.
        let sampling = Sampling {
            temperature: ctx.temperature.get_untracked(),
            max_tokens: ctx.max_tokens.get_untracked(),
            copy_bias: profile.as_ref().map(|p| p.copy_bias(domain)),
        };
        if ctx.in_browser.get_untracked() {
            if let Err(e) = crate::local::generate(ctx, &messages, sampling) {
                ctx.fail(e);
            }
            return;
        }
        let controller = AbortController::new().ok();
        let signal = controller.as_ref().map(|c| c.signal());
        ctx.abort.set_value(controller);
        let target = Target {
            base: ctx.base.get_untracked(),
            model: ctx.model.get_untracked(),
        };
        spawn_local(async move {
            let mut failed: Option<String> = None;
            let sampling = Sampling {
                copy_bias: None,
                ..sampling
            };
            let result =
                remote::stream_chat(&target, &messages, sampling, signal.as_ref(), |e| match e {
                    Event::Thinking(t) => ctx.thinking.update(|s| s.push_str(&t)),
                    Event::Content(t) => ctx.output.update(|s| s.push_str(&t)),
                    Event::Error(m) => failed = Some(m),
                    Event::Finished(r) if r == "length" => ctx.note_cut(),
                    Event::Finished(_) | Event::Done => {}
                })
                .await;
            ctx.abort.set_value(None);
            match result.err().or(failed) {
                Some(e) => ctx.fail(e),
                None => ctx.complete(),
            }
        });
    }

    /// Says that the answer hit the token limit.
    pub fn note_cut(&self) {
        self.notes
            .update(|n| n.push("the answer hit max tokens: the observation may be cut".into()));
    }

    /// Ends the running step with an error.
    pub fn fail(&self, e: String) {
        self.running.set(false);
        self.pending.set_value(None);
        self.error.set(Some(e));
    }

    /// Ends the running step: its prediction becomes the current state.
    pub fn complete(&self) {
        let ctx = *self;
        ctx.running.set(false);
        let Some(Pending {
            action,
            sent_state,
            prompt,
            form,
        }) = ctx.pending.try_update_value(|p| p.take()).flatten()
        else {
            return;
        };
        let output = ctx.output.get_untracked();
        // A server without a reasoning parser leaves <think> in the content.
        let mut thinking = ctx.thinking.get_untracked();
        if thinking.is_empty() && output.contains("</think>") {
            thinking = output
                .split("</think>")
                .next()
                .unwrap_or("")
                .replace("<think>", "")
                .trim()
                .to_string();
            ctx.thinking.set(thinking.clone());
            ctx.output.set(strip_thinking(&output));
        }
        // A patch-form model's patch, applied: the state view shows the full next state.
        let observation = form.full_state(&sent_state, &extract_observation(&output));
        ctx.session.update(|s| {
            s.system = ctx.system.get_untracked();
            s.steps.push(Step {
                action,
                state_before: sent_state,
                prompt,
                thinking,
                observation: observation.clone(),
            })
        });
        ctx.state.set(observation);
        ctx.selected.set(None);
    }

    /// Stops the running request.
    pub fn stop(&self) {
        if self.in_browser.get_untracked() {
            crate::local::stop();
        }
        self.abort.with_value(|c| {
            if let Some(c) = c {
                c.abort();
            }
        });
    }

    /// Takes the last step back: its state becomes current again.
    pub fn undo(&self) {
        let mut step = None;
        self.session.update(|s| step = s.undo());
        if let Some(step) = step {
            self.state.set(step.state_before);
            self.action.set(step.action);
            self.thinking.set(step.thinking);
            self.output.set(String::new());
            self.selected.set(None);
        }
    }
}

/// Asks the server which model it serves and loads the demo model's profile.
fn connect(ctx: Ctx) {
    spawn_local(async move {
        let demo = async {
            let card = remote::get_text(&format!("{DEMO_DIR}/agentworld.json")).await?;
            let config = remote::get_text(&format!("{DEMO_DIR}/config.json")).await?;
            let mut p = Profile::parse(&card, &config)?;
            for d in p.domains.clone() {
                if let Ok(t) =
                    remote::get_text(&format!("{DEMO_DIR}/prompts/{d}/system_prompt.txt")).await
                {
                    p.prompts.insert(d, t);
                }
            }
            Ok::<Profile, String>(p)
        };
        if let Ok(text) = remote::get_text(&format!("{DEMO_DIR}/routing.json")).await {
            match ExpertUse::parse(&text) {
                Ok(u) => ctx.expert_use.set(Some(u)),
                Err(e) => ctx.notes.update(|n| n.push(e)),
            }
        }
        match demo.await {
            Ok(p) => {
                if let Some(n) = p.max_new_tokens {
                    ctx.max_tokens.set(n);
                }
                ctx.profile.set(Some(p));
            }
            Err(e) => ctx
                .notes
                .update(|n| n.push(format!("no demo model profile ({e}); built-in prompts"))),
        }
        // The system prompt follows the profile, now that it is known.
        ctx.set_domain(ctx.domain.get_untracked());
        ctx.load_example(0);
        let target = Target {
            base: ctx.base.get_untracked(),
            model: String::new(),
        };
        match remote::first_model(&target).await {
            Ok(m) => ctx.model.set(m),
            Err(e) => ctx.error.set(Some(format!(
                "no model server at {}: {e}. Start one with `agentworld serve`, or set the server URL.",
                if target.base.is_empty() { "this page's origin" } else { &target.base }
            ))),
        }
    });
}

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
                    <button class="primary" data-testid="run" disabled=move || ctx.running.get() on:click=move |_| ctx.run()>"Run step ▶"</button>
                    <button disabled=move || !ctx.running.get() on:click=move |_| ctx.stop()>"Stop"</button>
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
