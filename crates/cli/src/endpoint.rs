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
        .build()
        .into()
}

/// The first model id the server lists at `/v1/models`.
pub fn first_model(base: &str) -> Result<String> {
    let url = format!("{}/v1/models", base.trim_end_matches('/'));
    let body: Value = agent(30)
        .get(&url)
        .call()
        .with_context(|| format!("GET {url}"))?
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
    let response = match agent(3600).post(&url).send_json(&body) {
        Ok(r) => r,
        Err(ureq::Error::StatusCode(code)) => bail!("{url} answered HTTP {code}"),
        Err(e) => return Err(e).with_context(|| format!("POST {url}")),
    };
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
