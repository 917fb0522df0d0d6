//! The worker's event loop: messages in, the engine, replies out.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use agentworld_engine::sampling::SamplingParams;
use agentworld_engine::{Engine, GenerateParams, ModelFiles, TokenRouting, check_buffer_limit};
use agentworld_model::{LoadOptions, WeightDtype};
use agentworld_text::reasoning::{ReasoningEvent, ReasoningSplitter};
use burn::backend::wgpu::{RuntimeOptions, WgpuDevice, graphics::WebGpu, init_setup_async};
use burn::backend::{Flex, Wgpu};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, Response};

use crate::{Reply, Request};

/// The loaded engine, on the backend that could run.
enum Loaded {
    Gpu(Box<Engine<Wgpu>>),
    Cpu(Box<Engine<Flex>>),
}

#[derive(Default)]
struct State {
    engine: RefCell<Option<Rc<Loaded>>>,
    stop: Cell<bool>,
    busy: Cell<bool>,
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn send(reply: &Reply) {
    let text = serde_json::to_string(reply).unwrap_or_default();
    let _ = scope().post_message(&JsValue::from_str(&text));
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let resp = JsFuture::from(scope().fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?;
    let resp: Response = resp.dyn_into().map_err(|_| format!("{url}: no response"))?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(js_err)?)
        .await
        .map_err(js_err)?;
    Ok(Uint8Array::new(&buf).to_vec())
}

async fn fetch_text(url: &str) -> Result<String, String> {
    String::from_utf8(fetch_bytes(url).await?).map_err(|e| format!("{url}: {e}"))
}

/// The model folder's files (a single `model.safetensors`).
async fn files(base: &str) -> Result<ModelFiles, String> {
    let at = |name: &str| format!("{base}{name}");
    send(&Reply::Loading {
        what: "downloading the weights".into(),
    });
    let card = fetch_text(&at("agentworld.json")).await.ok();
    Ok(ModelFiles {
        config_json: fetch_text(&at("config.json")).await?,
        shards: vec![(
            "model.safetensors".into(),
            fetch_bytes(&at("model.safetensors")).await?,
        )],
        tokenizer_json: fetch_bytes(&at("tokenizer.json")).await?,
        tokenizer_config_json: fetch_bytes(&at("tokenizer_config.json")).await.ok(),
        chat_template: fetch_text(&at("chat_template.jinja")).await.ok(),
        generation_config_json: fetch_bytes(&at("generation_config.json")).await.ok(),
        card: card.and_then(|c| serde_json::from_str(&c).ok()),
        ..ModelFiles::default()
    })
}

/// Whether the worker's `navigator.gpu` gives an adapter (its description, or why not).
async fn adapter() -> Result<String, String> {
    let nav = scope().navigator();
    let gpu = Reflect::get(&nav, &"gpu".into()).map_err(js_err)?;
    if gpu.is_undefined() {
        return Err("this browser has no WebGPU (navigator.gpu is missing)".into());
    }
    let request = Reflect::get(&gpu, &"requestAdapter".into()).map_err(js_err)?;
    let request: js_sys::Function = request.dyn_into().map_err(|_| "no requestAdapter")?;
    let promise: js_sys::Promise = request
        .call0(&gpu)
        .map_err(js_err)?
        .dyn_into()
        .map_err(js_err)?;
    let adapter = JsFuture::from(promise).await.map_err(js_err)?;
    if adapter.is_null() || adapter.is_undefined() {
        return Err("WebGPU gave no adapter".into());
    }
    let info = Reflect::get(&adapter, &"info".into()).unwrap_or(JsValue::UNDEFINED);
    let field = |k: &str| {
        Reflect::get(&info, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    Ok(format!(
        "{} {} {}",
        field("vendor"),
        field("architecture"),
        field("description")
    )
    .trim()
    .to_string())
}

/// The smaller of the adapter's `maxStorageBufferBindingSize` and `maxBufferSize`.
async fn adapter_buffer_limit() -> Option<u64> {
    let gpu = Reflect::get(&scope().navigator(), &"gpu".into()).ok()?;
    let request: js_sys::Function = Reflect::get(&gpu, &"requestAdapter".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let promise: js_sys::Promise = request.call0(&gpu).ok()?.dyn_into().ok()?;
    let adapter = JsFuture::from(promise).await.ok()?;
    let limits = Reflect::get(&adapter, &"limits".into()).ok()?;
    let get = |k: &str| {
        Reflect::get(&limits, &k.into())
            .ok()
            .and_then(|v| v.as_f64())
    };
    Some(get("maxStorageBufferBindingSize")?.min(get("maxBufferSize")?) as u64)
}

async fn load(
    state: Rc<State>,
    base: String,
    cpu: bool,
    max_buffer_mb: Option<u64>,
) -> Result<(), String> {
    let files = files(&base).await?;
    let mut progress = |_: usize, _: usize| {};
    let mut gpu = if cpu {
        Err("the CPU was asked for".to_string())
    } else {
        adapter().await
    };
    // A tensor larger than one storage buffer cannot be bound: refuse WebGPU, say why.
    // `max_buffer_mb` lowers the adapter's limit (to show or test the refusal).
    if gpu.is_ok()
        && let Some((name, need)) = files.largest_tensor_f32()
    {
        let cap = max_buffer_mb.map(|mb| mb << 20);
        let allow = match (adapter_buffer_limit().await, cap) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        };
        if let Some(allow) = allow
            && let Err(why) = check_buffer_limit(&name, need, allow)
        {
            gpu = Err(why);
        }
    }
    let (loaded, backend, note) = match gpu {
        Ok(name) => {
            send(&Reply::Loading {
                what: format!("starting WebGPU ({name})"),
            });
            let device = WgpuDevice::default();
            init_setup_async::<WebGpu>(&device, RuntimeOptions::default()).await;
            // Half the bytes where the adapter has `shader-f16`; f32 elsewhere (SwiftShader).
            let f16 = <Wgpu as burn::tensor::backend::Backend>::supports_dtype(
                &device,
                burn::tensor::DType::F16,
            );
            let (options, weights) = if f16 {
                (LoadOptions::dtype(WeightDtype::F16), "f16 weights")
            } else {
                (LoadOptions::default(), "f32 weights (no shader-f16)")
            };
            let e = Engine::<Wgpu>::from_files_with(&files, &device, options, &mut progress)
                .map_err(|e| e.to_string())?;
            (
                Loaded::Gpu(Box::new(e)),
                "webgpu",
                format!("{name}, {weights}"),
            )
        }
        Err(why) => {
            send(&Reply::Loading {
                what: format!("no WebGPU ({why}): loading on the CPU"),
            });
            let e = Engine::<Flex>::from_files(&files, &Default::default(), &mut progress)
                .map_err(|e| e.to_string())?;
            (
                Loaded::Cpu(Box::new(e)),
                "cpu",
                format!("{why}; f32 weights"),
            )
        }
    };
    *state.engine.borrow_mut() = Some(Rc::new(loaded));
    send(&Reply::Ready {
        backend: backend.into(),
        note,
    });
    Ok(())
}

/// Sends one token's routing to the page, with the token's text.
fn send_routing(tokenizer: &agentworld_text::Tokenizer, r: TokenRouting) {
    let text = tokenizer.decode(&[r.token], false).unwrap_or_default();
    send(&Reply::Routing {
        text,
        experts: r.experts,
        weights: r.weights,
    });
}

/// Renders `messages` and generates on `e`, with the card's marks for the copy prior (the
/// lines the action names, the state a terminal copy is held to:
/// [`agentworld_engine::encode_prompt_marks`]), reporting routing as it goes.
async fn run_on<B: burn::tensor::backend::Backend>(
    e: &Engine<B>,
    messages: &[agentworld_world::Message],
    params: &GenerateParams,
    on_text: &mut dyn FnMut(&str),
    stop: &dyn Fn() -> bool,
) -> Result<agentworld_engine::Generation, String> {
    let text = e.render_prompt(messages, None).map_err(|x| x.to_string())?;
    let (ids, marks) = agentworld_engine::encode_prompt_marks(
        &e.tokenizer,
        e.card.as_ref(),
        &text,
        None,
        agentworld_engine::NamedBias::Card,
    )
    .map_err(|x| x.to_string())?;
    let mut on_routing = |r: TokenRouting| send_routing(&e.tokenizer, r);
    e.generate_async_routed(
        &ids,
        Some(&marks),
        params,
        on_text,
        stop,
        Some(&mut on_routing),
    )
    .await
    .map_err(|x| x.to_string())
}

async fn generate(
    state: Rc<State>,
    messages: Vec<agentworld_world::Message>,
    max_tokens: usize,
    temperature: f32,
    copy_bias: f32,
) -> Result<(), String> {
    let engine = state
        .engine
        .borrow()
        .clone()
        .ok_or("the model is not loaded yet")?;
    let params = GenerateParams {
        max_tokens,
        sampling: SamplingParams {
            temperature,
            // Clamped as `agentworld serve` validates it; not a number: off.
            copy_bias: if copy_bias.is_finite() {
                copy_bias.clamp(0.0, 100.0)
            } else {
                0.0
            },
            ..SamplingParams::greedy()
        },
    };
    let mut splitter = ReasoningSplitter::new(true);
    let forward = |events: Vec<ReasoningEvent>| {
        for e in events {
            send(&match e {
                ReasoningEvent::Reasoning(text) => Reply::Thinking { text },
                ReasoningEvent::Content(text) => Reply::Content { text },
            });
        }
    };
    let mut on_text = |piece: &str| forward(splitter.push(piece));
    state.stop.set(false);
    let stop_state = state.clone();
    let stop = move || stop_state.stop.get();
    let out = match &*engine {
        Loaded::Gpu(e) => run_on(e, &messages, &params, &mut on_text, &stop).await,
        Loaded::Cpu(e) => run_on(e, &messages, &params, &mut on_text, &stop).await,
    }?;
    forward(splitter.finish());
    let finish = serde_json::to_value(out.finish_reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    send(&Reply::Done {
        finish,
        tokens: out.token_ids.len(),
    });
    Ok(())
}

/// Starts listening (runs when the module is instantiated).
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
    let state = Rc::new(State::default());
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let text = ev.data().as_string().unwrap_or_default();
        let request: Request = match serde_json::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                return send(&Reply::Error {
                    message: format!("bad request: {e}"),
                });
            }
        };
        let state = state.clone();
        match request {
            Request::Stop => state.stop.set(true),
            Request::Load {
                base,
                cpu,
                max_buffer_mb,
            } => spawn_local(async move {
                if let Err(message) = load(state, base, cpu, max_buffer_mb).await {
                    send(&Reply::Error { message });
                }
            }),
            Request::Generate {
                messages,
                max_tokens,
                temperature,
                copy_bias,
            } => {
                if state.busy.replace(true) {
                    return send(&Reply::Error {
                        message: "a generation is running".into(),
                    });
                }
                spawn_local(async move {
                    let result =
                        generate(state.clone(), messages, max_tokens, temperature, copy_bias).await;
                    state.busy.set(false);
                    if let Err(message) = result {
                        send(&Reply::Error { message });
                    }
                })
            }
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    send(&Reply::Alive);
}
