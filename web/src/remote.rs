//! The remote engine: any OpenAI-compatible server (`agentworld serve`, vLLM, SGLang), asked
//! for a streaming chat completion with `fetch`, its body read chunk by chunk.

use js_sys::{Reflect, Uint8Array};
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Headers, ReadableStreamDefaultReader, Request, RequestInit, Response};

use agentworld_world::Message;

use crate::sse::{Decoder, Event};

/// What a request to the server needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The server's base URL (`http://127.0.0.1:8000`); empty: the page's own origin.
    pub base: String,
    /// The model name; empty: the server's first model.
    pub model: String,
}

impl Target {
    /// `path` under the base URL.
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base.trim_end_matches('/'))
    }
}

/// A JS error as text.
fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

async fn fetch(request: &Request) -> Result<Response, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_request(request))
        .await
        .map_err(|e| format!("cannot reach the server: {}", js_err(e)))?;
    resp.dyn_into::<Response>()
        .map_err(|_| "fetch gave no response".to_string())
}

async fn body_text(resp: &Response) -> Result<String, String> {
    let p = resp.text().map_err(js_err)?;
    let t = JsFuture::from(p).await.map_err(js_err)?;
    Ok(t.as_string().unwrap_or_default())
}

/// GETs `url` (relative to the page or absolute) as text; a non-2xx status is an error.
pub async fn get_text(url: &str) -> Result<String, String> {
    let request = Request::new_with_str(url).map_err(js_err)?;
    let resp = fetch(&request).await?;
    let text = body_text(&resp).await?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {} {}", resp.status(), text.trim()));
    }
    Ok(text)
}

/// The first model the server lists (`GET /v1/models`).
pub async fn first_model(target: &Target) -> Result<String, String> {
    let text = get_text(&target.url("/v1/models")).await?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("/v1/models: {e}"))?;
    v["data"][0]["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| "the server lists no model".to_string())
}

/// Sampling settings of one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Temperature (0: greedy).
    pub temperature: f64,
    /// Most tokens to generate.
    pub max_tokens: usize,
    /// The copy prior (nats; `agentworld serve`'s `copy_bias` extension, sent only when set:
    /// other servers would not know it).
    pub copy_bias: Option<f32>,
}

/// Streams a chat completion for `messages`, calling `on` for every event. Returns when the
/// stream ends; `signal` aborts it.
pub async fn stream_chat(
    target: &Target,
    messages: &[Message],
    sampling: Sampling,
    signal: Option<&AbortSignal>,
    mut on: impl FnMut(Event),
) -> Result<(), String> {
    let mut body = json!({
        "messages": messages,
        "stream": true,
        "temperature": sampling.temperature,
        "max_tokens": sampling.max_tokens,
    });
    if !target.model.is_empty() {
        body["model"] = json!(target.model);
    }
    if let Some(b) = sampling.copy_bias {
        body["copy_bias"] = json!(b);
    }
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&JsValue::from_str(&body.to_string()));
    let headers = Headers::new().map_err(js_err)?;
    headers
        .set("Content-Type", "application/json")
        .map_err(js_err)?;
    init.set_headers(&headers);
    if let Some(s) = signal {
        init.set_signal(Some(s));
    }
    let url = target.url("/v1/chat/completions");
    let request = Request::new_with_str_and_init(&url, &init).map_err(js_err)?;
    let resp = fetch(&request).await?;
    if !resp.ok() {
        let text = body_text(&resp).await.unwrap_or_default();
        let msg = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
            .unwrap_or(text);
        return Err(format!("{url}: HTTP {}: {}", resp.status(), msg.trim()));
    }
    let stream = resp.body().ok_or("the response has no body")?;
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let mut decoder = Decoder::new();
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("the stream broke: {}", js_err(e)))?;
        let done = Reflect::get(&chunk, &"done".into())
            .map(|d| d.as_bool().unwrap_or(false))
            .unwrap_or(true);
        if done {
            break;
        }
        let value = Reflect::get(&chunk, &"value".into()).map_err(js_err)?;
        let bytes = Uint8Array::new(&value).to_vec();
        for e in decoder.push(&bytes) {
            on(e);
        }
    }
    for e in decoder.finish() {
        on(e);
    }
    Ok(())
}
