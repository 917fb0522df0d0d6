//! Running a step: the model in this page (the Web Worker, [`crate::local`]) or on a server
//! ([`crate::remote`], streamed), and finding out what the server serves ([`connect`]).

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::AbortController;

use crate::ctx::Ctx;
use crate::profile::{DEMO_DIR, Profile};
use crate::remote::{self, Sampling, Target};
use crate::routing::ExpertUse;
use crate::sse::Event;

/// Runs one world-model step on the current state and action.
pub fn run(ctx: Ctx) {
    let Some((messages, sampling)) = ctx.begin_step() else {
        return;
    };
    if ctx.in_browser.get_untracked() {
        if let Err(e) = crate::local::generate(ctx, &messages, sampling) {
            ctx.fail(e);
        }
        return;
    }
    let controller = AbortController::new().ok();
    let signal = controller.as_ref().map(|c| c.signal());
    ctx.set_abort(controller);
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
        ctx.set_abort(None);
        match result.err().or(failed) {
            Some(e) => ctx.fail(e),
            None => ctx.complete(),
        }
    });
}

/// Stops the running step, wherever it runs.
pub fn stop(ctx: Ctx) {
    if ctx.in_browser.get_untracked() {
        crate::local::stop();
    }
    ctx.abort_request();
}

/// Asks the server which model it serves and loads the demo model's profile.
pub fn connect(ctx: Ctx) {
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
