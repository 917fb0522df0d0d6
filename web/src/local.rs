//! The in-browser engine, from the page's side: a module Web Worker (`worker.js`, which loads
//! `worker/agentworld_worker.js` built from `web/worker`) that loads the demo model and
//! streams answers back (protocol in `web/worker/src/lib.rs`).

use std::cell::RefCell;

use agentworld_world::Message;
use leptos::prelude::*;
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

use crate::ctx::Ctx;
use crate::profile::DEMO_DIR;
use crate::remote::Sampling;
use crate::routing::TokenRoute;

thread_local! {
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

fn post(w: &Worker, v: &Value) -> Result<(), String> {
    w.post_message(&JsValue::from_str(&v.to_string()))
        .map_err(|e| format!("the worker refused a message: {e:?}"))
}

/// `?max-buffer-mb=N` in the page's address: the in-browser engine treats the GPU as allowing
/// at most N MB per buffer, to show (and test) how a model too big for the device is refused.
fn max_buffer_mb() -> Option<u64> {
    let search = web_sys::window()?.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix("max-buffer-mb="))
        .and_then(|v| v.parse().ok())
}

fn on_reply(ctx: Ctx, text: &str) {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    match v["kind"].as_str().unwrap_or("") {
        "alive" => WORKER.with(|w| {
            if let Some(w) = &*w.borrow() {
                ctx.local_status.set("loading the model…".into());
                let base = format!("{DEMO_DIR}/");
                let load = json!({"kind": "load", "base": base, "max_buffer_mb": max_buffer_mb()});
                if let Err(e) = post(w, &load) {
                    ctx.error.set(Some(e));
                }
            }
        }),
        "loading" => ctx.local_status.set(s("what")),
        "ready" => ctx.local_status.set(match s("backend").as_str() {
            "webgpu" => format!("in this page on WebGPU ({})", s("note")),
            _ => format!("in this page on the CPU: {}", s("note")),
        }),
        "thinking" => ctx.thinking.update(|t| t.push_str(&s("text"))),
        "content" => ctx.output.update(|t| t.push_str(&s("text"))),
        "routing" => {
            if let Ok(route) = serde_json::from_value::<TokenRoute>(v.clone()) {
                let experts = ctx.profile.get_untracked().map_or(0, |p| p.experts);
                let domain = ctx.domain.get_untracked();
                ctx.usage
                    .update(|u| u.add(domain.as_str(), &route, experts));
                ctx.routes.update(|r| r.push(route));
            }
        }
        "done" => {
            if s("finish") == "length" {
                ctx.note_cut();
            }
            ctx.complete();
        }
        "error" => {
            if ctx.running.get_untracked() {
                ctx.fail(s("message"));
            } else {
                ctx.local_status.set(format!("failed: {}", s("message")));
            }
        }
        _ => {}
    }
}

/// Starts the worker (once); it loads the demo model and says when it is ready.
pub fn start(ctx: Ctx) {
    if WORKER.with(|w| w.borrow().is_some()) {
        return;
    }
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = match Worker::new_with_options("worker.js", &options) {
        Ok(w) => w,
        Err(e) => {
            ctx.local_status.set(format!("no worker: {e:?}"));
            return;
        }
    };
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        on_reply(ctx, &ev.data().as_string().unwrap_or_default())
    });
    worker.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |_| {
        ctx.local_status
            .set("the in-browser engine did not start (is it built? see web/README.md)".into());
        if ctx.running.get_untracked() {
            ctx.fail("the in-browser engine stopped".into());
        }
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    ctx.local_status.set("starting the worker…".into());
    WORKER.with(|w| *w.borrow_mut() = Some(worker));
}

/// Asks the worker for an answer to `messages`; replies arrive through [`start`]'s handler.
pub fn generate(ctx: Ctx, messages: &[Message], sampling: Sampling) -> Result<(), String> {
    start(ctx);
    WORKER.with(|w| {
        let w = w.borrow();
        let w = w.as_ref().ok_or("the in-browser engine is not running")?;
        post(
            w,
            &json!({"kind": "generate", "messages": messages,
                    "max_tokens": sampling.max_tokens, "temperature": sampling.temperature,
                    "copy_bias": sampling.copy_bias.unwrap_or(0.0)}),
        )
    })
}

/// Asks the worker to stop the running generation.
pub fn stop() {
    WORKER.with(|w| {
        if let Some(w) = &*w.borrow() {
            let _ = post(w, &json!({"kind": "stop"}));
        }
    });
}
