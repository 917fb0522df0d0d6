//! Shared helpers of the server tests: start a server on loopback (demo model or scripted
//! output), send requests, read SSE streams.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agentworld_engine::Engine;
use agentworld_serve::testing::{Script, ScriptedBatch};
use agentworld_serve::{EngineHandle, ModelText, ServeConfig};
use agentworld_text::{ChatTemplate, GenerationConfig, Tokenizer};
use serde_json::Value;

type B = burn::backend::Flex;

/// The demo model of this checkout.
pub fn demo_dir() -> PathBuf {
    manifest_dir().join("../../public/models/agentworld-demo")
}

/// A running server; it stops when the test's runtime ends.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// A client with a generous timeout.
    pub client: reqwest::Client,
}

/// Settings with `max_batch` and `max_queue`, named `agentworld-demo`.
pub fn config(max_batch: usize, max_queue: usize) -> ServeConfig {
    ServeConfig {
        model_name: "agentworld-demo".into(),
        max_batch,
        max_queue,
        max_model_len: None,
    }
}

async fn listen(engine: EngineHandle) -> Server {
    listen_router(agentworld_serve::router(engine)).await
}

/// Serves `router` on a free loopback port.
pub async fn listen_router(router: axum::Router) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(agentworld_serve::serve_router(
        listener,
        router,
        std::future::pending(),
    ));
    Server {
        base: format!("http://{addr}"),
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(300))
            .build()
            .unwrap(),
    }
}

/// A server on the demo model.
pub async fn real(config: ServeConfig) -> Server {
    let dir = demo_dir();
    let engine = EngineHandle::spawn(
        move || Engine::<B>::load_dir(&dir, &Default::default(), &mut |_, _| {}),
        &config,
    )
    .expect("the demo model loads");
    listen(engine).await
}

/// The demo model's tokenizer and template, without weights.
pub fn demo_text() -> ModelText {
    let dir = demo_dir();
    ModelText {
        tokenizer: Tokenizer::from_file(dir.join("tokenizer.json")).unwrap(),
        template: ChatTemplate::from_dir(&dir).unwrap(),
        generation_config: GenerationConfig::default(),
        context: 2048,
        card: Default::default(),
    }
}

/// A server whose "model" replies with `script(prompt text)`, one piece per step.
pub async fn scripted(
    script: impl Fn(&str) -> Vec<String> + Send + Sync + 'static,
    step_delay: Duration,
    config: ServeConfig,
) -> Server {
    let text = demo_text();
    let tokenizer = text.tokenizer.clone();
    let script: Script =
        Arc::new(move |ids: &[u32]| script(&tokenizer.decode(ids, false).unwrap_or_default()));
    let engine =
        EngineHandle::spawn_batch(text, ScriptedBatch::new(script, step_delay), &config).unwrap();
    listen(engine).await
}

impl Server {
    /// POSTs a JSON body (or raw text when `body` is a string) and returns status, headers
    /// and body text.
    pub async fn post_raw(
        &self,
        path: &str,
        body: String,
    ) -> (u16, reqwest::header::HeaderMap, String) {
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        (status, headers, r.text().await.unwrap())
    }

    /// POSTs JSON and parses a JSON answer.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, _, text) = self.post_raw(path, body.to_string()).await;
        let value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
        (status, value)
    }

    /// GETs a path and returns status and body text.
    pub async fn get(&self, path: &str) -> (u16, String) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// POSTs a streaming request and returns its parsed `data:` events, checking that the
    /// stream ends with `[DONE]`.
    pub async fn stream(&self, path: &str, body: &Value) -> Vec<Value> {
        let (status, headers, text) = self.post_raw(path, body.to_string()).await;
        assert_eq!(status, 200, "{text}");
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream"),
            "{headers:?}"
        );
        parse_sse(&text)
    }

    /// A metric's value from `/metrics`.
    pub async fn metric(&self, name: &str) -> f64 {
        let (_, text) = self.get("/metrics").await;
        text.lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with('{'))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from {text}"))
    }
}

/// Parses an SSE body into its JSON events; panics unless the last event is `[DONE]`.
pub fn parse_sse(text: &str) -> Vec<Value> {
    let data: Vec<&str> = text
        .split("\n\n")
        .filter_map(|event| {
            event
                .lines()
                .find_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
        })
        .collect();
    assert_eq!(
        data.last(),
        Some(&"[DONE]"),
        "stream must end with [DONE]: {text}"
    );
    data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("bad chunk {d}: {e}")))
        .collect()
}

/// Reasoning, content, tool calls (merged by index) and finish reason of chat chunks.
pub struct Assembled {
    pub reasoning: String,
    pub content: String,
    pub tool_calls: Vec<Value>,
    pub finish_reason: String,
    pub usage: Option<Value>,
}

/// Accumulates a chat stream the way the OpenAI client does, checking every chunk's shape.
pub fn assemble(chunks: &[Value]) -> Assembled {
    let mut out = Assembled {
        reasoning: String::new(),
        content: String::new(),
        tool_calls: Vec::new(),
        finish_reason: String::new(),
        usage: None,
    };
    let id = chunks[0]["id"].as_str().unwrap().to_owned();
    let mut finishes = 0;
    for c in chunks {
        assert_eq!(c["object"], "chat.completion.chunk", "{c}");
        assert_eq!(c["id"], id.as_str(), "one id per stream");
        if let Some(u) = c.get("usage") {
            out.usage = Some(u.clone());
            continue;
        }
        let choice = &c["choices"][0];
        let delta = &choice["delta"];
        if let Some(r) = delta["reasoning_content"].as_str() {
            out.reasoning.push_str(r);
        }
        if let Some(t) = delta["content"].as_str() {
            out.content.push_str(t);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            assert_eq!(
                index,
                out.tool_calls.len(),
                "tool calls are numbered in order"
            );
            assert!(call["id"].as_str().unwrap().starts_with("call_"));
            out.tool_calls.push(call.clone());
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            finishes += 1;
            out.finish_reason = f.to_owned();
        }
    }
    assert_eq!(finishes, 1, "exactly one chunk has a finish_reason");
    out
}

/// A one-message chat request.
pub fn chat(content: &str, max_tokens: u32) -> Value {
    serde_json::json!({
        "model": "agentworld-demo",
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": 0,
    })
}

/// This package's directory: `CARGO_MANIFEST_DIR` as cargo sets it when it runs the test (so a
/// test binary cached from a checkout at another path still reads this checkout's files), or
/// as it was at compile time.
fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
