//! A minimal OpenAI-compatible chat client with streaming, for `--endpoint` (vLLM, SGLang or
//! `agentworld serve` running the real Qwen-AgentWorld model).
//!
//! Reasoning arrives as `delta.reasoning_content` (vLLM/SGLang with `--reasoning-parser qwen3`)
//! or `delta.reasoning` (newer vLLM), answers as `delta.content`; without a reasoning parser the
//! `<think>` block is inside the content. Either way the deltas are replayed as raw model text
//! (reasoning, then `</think>`, then content) so one display path handles both.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// What a streamed chat completion produced.
pub struct Completion {
    /// Raw-equivalent text: reasoning, `</think>`, content.
    pub text: String,
    /// Completion tokens, if the server reported usage.
    pub completion_tokens: Option<u64>,
}

fn agent(timeout_secs: u64) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(timeout_secs)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// `response` when its status is 2xx, else an error with the status and what the server said
/// (an OpenAI-style `error.message`, else the start of the body).
fn ok_or_detail(
    url: &str,
    response: ureq::http::Response<ureq::Body>,
) -> Result<ureq::http::Response<ureq::Body>> {
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let body = response
        .into_body()
        .with_config()
        .limit(64 * 1024)
        .read_to_string()
        .unwrap_or_default();
    let detail = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.trim().chars().take(300).collect());
    if detail.is_empty() {
        bail!("{url} answered HTTP {status}")
    }
    bail!("{url} answered HTTP {status}: {detail}")
}

/// The first model id the server lists at `/v1/models`.
pub fn first_model(base: &str) -> Result<String> {
    let url = format!("{}/v1/models", base.trim_end_matches('/'));
    let response = agent(30)
        .get(&url)
        .call()
        .with_context(|| format!("GET {url}"))?;
    let body: Value = ok_or_detail(&url, response)?
        .body_mut()
        .read_json()
        .with_context(|| format!("{url} did not return JSON"))?;
    body["data"][0]["id"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("{url} lists no model; pass --model-name"))
}

/// Streams a chat completion, calling `on_text` with raw-equivalent text deltas.
pub fn stream_chat(
    base: &str,
    model: &str,
    messages: &Value,
    max_tokens: usize,
    temperature: f32,
    seed: Option<u64>,
    on_text: &mut dyn FnMut(&str),
) -> Result<Completion> {
    let url = format!("{}/v1/chat/completions", base.trim_end_matches('/'));
    let mut body = json!({
        "model": model, "messages": messages, "stream": true, "max_tokens": max_tokens,
        "temperature": temperature, "stream_options": {"include_usage": true},
    });
    if let Some(seed) = seed {
        body["seed"] = seed.into();
    }
    let response = agent(3600)
        .post(&url)
        .send_json(&body)
        .with_context(|| format!("POST {url}"))?;
    let response = ok_or_detail(&url, response)?;
    let reader = BufReader::new(response.into_body().into_reader());
    let mut text = String::new();
    let mut in_reasoning = false;
    let mut completion_tokens = None;
    for line in reader.lines() {
        let line = line.with_context(|| format!("reading the stream from {url}"))?;
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        if data == "[DONE]" {
            break;
        }
        let chunk: Value =
            serde_json::from_str(data).with_context(|| format!("bad stream chunk: {data}"))?;
        if let Some(err) = chunk.get("error") {
            bail!("server error: {err}");
        }
        if let Some(n) = chunk["usage"]["completion_tokens"].as_u64() {
            completion_tokens = Some(n);
        }
        let delta = &chunk["choices"][0]["delta"];
        let reasoning = delta["reasoning_content"]
            .as_str()
            .or_else(|| delta["reasoning"].as_str());
        if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
            in_reasoning = true;
            text.push_str(r);
            on_text(r);
        }
        if let Some(c) = delta["content"].as_str().filter(|c| !c.is_empty()) {
            if in_reasoning {
                in_reasoning = false;
                text.push_str("\n</think>\n\n");
                on_text("\n</think>\n\n");
            }
            text.push_str(c);
            on_text(c);
        }
    }
    Ok(Completion {
        text,
        completion_tokens,
    })
}

/// `{base}/v1/chat/completions`, or `{base}/chat/completions` when `base` already ends in
/// `/v1` (the form OpenAI clients take, e.g. `https://api.openai.com/v1`).
pub fn chat_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    }
}

/// One non-streamed chat completion request.
pub struct ChatRequest<'a> {
    /// Server base URL (with or without `/v1`).
    pub base: &'a str,
    /// Model name on the server.
    pub model: &'a str,
    /// `[{"role", "content"}, ...]`.
    pub messages: &'a Value,
    /// `max_tokens`.
    pub max_tokens: usize,
    /// `temperature` (an `f64`, so 0.6 is sent as `0.6`).
    pub temperature: f64,
    /// Limit for the whole call (connect, send, wait, read).
    pub timeout: Duration,
    /// Sent as `Authorization: Bearer …` when set.
    pub api_key: Option<&'a str>,
}

/// What a non-streamed chat completion returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    /// `choices[0].message.content` (empty when null).
    pub content: String,
    /// `message.reasoning_content` or `message.reasoning`, when the server split it off.
    pub reasoning: Option<String>,
    /// `choices[0].finish_reason`.
    pub finish_reason: Option<String>,
}

/// Why a chat call failed, and whether the same call may succeed later.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    /// What happened, with the URL.
    pub message: String,
    /// Transport errors, timeouts, HTTP 408, 409, 425, 429 and 5xx, unreadable replies: yes.
    /// Other HTTP errors (400 for a prompt over the context, 401, 404): no.
    pub retryable: bool,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CallError {}

/// Sends one chat completion (no streaming) and reads `choices[0].message`.
pub fn chat(request: &ChatRequest) -> std::result::Result<ChatReply, CallError> {
    let url = chat_url(request.base);
    let fail = |message: String, retryable: bool| CallError { message, retryable };
    let body = json!({
        "model": request.model, "messages": request.messages,
        "max_tokens": request.max_tokens, "temperature": request.temperature,
    });
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(request.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut call = agent.post(&url);
    if let Some(key) = request.api_key {
        call = call.header("Authorization", format!("Bearer {key}"));
    }
    let response = call
        .send_json(&body)
        .map_err(|e| fail(format!("POST {url}: {e}"), true))?;
    let status = response.status().as_u16();
    let text = response
        .into_body()
        .read_to_string()
        .map_err(|e| fail(format!("reading the reply from {url}: {e}"), true))?;
    if !(200..300).contains(&status) {
        let retryable = matches!(status, 408 | 409 | 425 | 429) || status >= 500;
        let detail: String = text.chars().take(300).collect();
        return Err(fail(
            format!("{url} answered HTTP {status}: {detail}"),
            retryable,
        ));
    }
    let reply: Value = serde_json::from_str(&text)
        .map_err(|e| fail(format!("{url} did not return JSON ({e})"), true))?;
    if let Some(err) = reply.get("error").filter(|e| !e.is_null()) {
        return Err(fail(format!("{url}: server error: {err}"), true));
    }
    let choice = &reply["choices"][0];
    let message = &choice["message"];
    if !message.is_object() {
        return Err(fail(
            format!("{url}: the reply has no choices[0].message"),
            true,
        ));
    }
    let text_field = |key: &str| message[key].as_str().map(str::to_string);
    Ok(ChatReply {
        content: text_field("content").unwrap_or_default(),
        reasoning: text_field("reasoning_content")
            .or_else(|| text_field("reasoning"))
            .filter(|r| !r.is_empty()),
        finish_reason: choice["finish_reason"].as_str().map(str::to_string),
    })
}
