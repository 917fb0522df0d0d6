//! The page's shared state ([`Ctx`]: every signal the components read and write) and the
//! bookkeeping of a step: begin it, finish it with the model's answer, fail it, undo it. Who
//! runs the model (a server or the in-page worker) is [`crate::step`]'s business; this module
//! imports no component and no engine.

use agentworld_text::observation::{extract_observation, strip_thinking};
use agentworld_world::diff::ObservationForm;
use agentworld_world::{Domain, Message};
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::AbortController;

use crate::examples::EXAMPLES;
use crate::profile::Profile;
use crate::remote::{self, Sampling};
use crate::routing::{ExpertUse, TokenRoute, Usage};
use crate::session::{Session, Step, model_state};

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
    /// Fresh state: Android, no session, the built-in prompt.
    pub fn new() -> Ctx {
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

    /// Starts a world-model step on the current state and action: clears the last answer,
    /// records what the step needs when its answer is in, and gives the messages to send and
    /// how to sample; `None` when a step is running or there is no action.
    pub fn begin_step(&self) -> Option<(Vec<Message>, Sampling)> {
        let ctx = *self;
        if ctx.running.get_untracked() {
            return None;
        }
        let domain = ctx.domain.get_untracked();
        let action = ctx.action.get_untracked();
        if action.trim().is_empty() {
            ctx.error.set(Some("compose an action first".into()));
            return None;
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
        Some((messages, sampling))
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

    /// Aborts the running server request, if any.
    pub fn abort_request(&self) {
        self.abort.with_value(|c| {
            if let Some(c) = c {
                c.abort();
            }
        });
    }

    /// Keeps the controller that cancels the running server request (`None`: it finished).
    pub fn set_abort(&self, controller: Option<AbortController>) {
        self.abort.set_value(controller);
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
