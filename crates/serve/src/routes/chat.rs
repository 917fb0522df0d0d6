//! `POST /v1/chat/completions`.

use std::convert::Infallible;
use std::sync::Arc;

use agentworld_engine::{FinishReason, PromptMarks};
use agentworld_text::RenderOptions;
use agentworld_text::tool_calls::{ToolCall, ToolSchemas};
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;
use crate::output::{ChatDelta, ChatOutput};
use crate::request::{Knobs, encode_chat_prompt, now_secs, parse_body, random_id};
use crate::scheduler::JobEvent;

mod messages;

use messages::{ChatRequest, template_message};

/// Handles a chat completion, streaming or not.
pub async fn handle(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let response = match prepare(&state, body) {
        Ok(job) => job.run(&state).await,
        Err(e) => e.into_response(),
    };
    state
        .engine
        .metrics
        .request("chat", response.status().as_u16());
    response
}

/// A validated request, ready to queue.
struct ChatJob {
    prompt: Vec<u32>,
    marks: PromptMarks,
    knobs: Knobs,
    stream: bool,
    include_usage: bool,
    thinking: bool,
    tools: Option<ToolSchemas>,
}

fn prepare(state: &AppState, body: Result<Bytes, BytesRejection>) -> Result<ChatJob, ApiError> {
    let request: ChatRequest = parse_body(body)?;
    let info = &state.engine.info;
    if let Some(model) = &request.model
        && model != &info.name
    {
        return Err(ApiError::unknown_model(model, &info.name));
    }
    let knobs = Knobs {
        max_tokens: request
            .max_completion_tokens
            .map(|n| (n, "max_completion_tokens"))
            .or(request.max_tokens.map(|n| (n, "max_tokens"))),
        temperature: request.temperature,
        top_p: request.top_p,
        top_k: request.top_k,
        copy_bias: request.copy_bias,
        seed: request.seed,
        n: request.n,
        stop: request.stop,
    };
    knobs.validate()?;
    if request.messages.is_empty() {
        return Err(ApiError::bad_request(
            Some("messages"),
            "`messages` is empty; send at least one message, e.g. \
             [{\"role\": \"user\", \"content\": \"...\"}].",
        ));
    }
    let messages = request
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| template_message(i, m))
        .collect::<Result<Vec<_>, _>>()?;

    let tools = request.tools.unwrap_or_default();
    if let Some(i) = tools.iter().position(|t| !t.is_object()) {
        return Err(ApiError::bad_request(
            Some(&format!("tools[{i}]")),
            "Each tool must be an object like {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": {...}}}.",
        ));
    }
    let mut options = RenderOptions::new().with_generation_prompt(true);
    for (key, value) in request.chat_template_kwargs.unwrap_or_default() {
        if key == "enable_thinking" {
            let Some(on) = value.as_bool() else {
                return Err(ApiError::bad_request(
                    Some("chat_template_kwargs.enable_thinking"),
                    "`chat_template_kwargs.enable_thinking` must be true or false.",
                ));
            };
            options = options.with_thinking(on);
        } else {
            options = options.with_var(key, value);
        }
    }
    let tool_choice_none = request.tool_choice.as_ref().and_then(Value::as_str) == Some("none");
    let parse_tools = !tools.is_empty() && !tool_choice_none;
    let schemas = parse_tools.then(|| ToolSchemas::from_tools(&tools));
    if !tools.is_empty() {
        options = options.with_tools(tools);
    }
    let text = info.template.render(&messages, &options).map_err(|e| {
        ApiError::bad_request(
            Some("messages"),
            format!("The chat template rejected the messages: {e}"),
        )
    })?;
    let named_bias = knobs.named_bias();
    let (prompt, marks) = encode_chat_prompt(info, &text, named_bias)
        .map_err(|e| ApiError::internal(format!("tokenizing the prompt failed: {e}")))?;
    Ok(ChatJob {
        prompt,
        marks,
        knobs,
        stream: request.stream.unwrap_or(false),
        include_usage: request
            .stream_options
            .and_then(|o| o.include_usage)
            .unwrap_or(false),
        // The template ends the prompt in `<think>\n` when thinking is on.
        thinking: text.trim_end().ends_with("<think>"),
        tools: schemas,
    })
}

/// The parts of a response every chunk repeats.
struct Envelope {
    id: String,
    created: u64,
    model: String,
}

impl Envelope {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    }
}

fn usage(prompt: usize, completion: usize) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion})
}

/// OpenAI `tool_calls` entries, numbered from `first`.
fn tool_calls_json(calls: &[ToolCall], first: usize) -> Vec<Value> {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"index": first + i, "id": random_id("call_"), "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()}})
        })
        .collect()
}

fn finish_name(reason: Option<FinishReason>, called: bool) -> &'static str {
    match reason {
        Some(FinishReason::Length) => "length",
        _ if called => "tool_calls",
        _ => "stop",
    }
}

impl ChatJob {
    async fn run(self, state: &AppState) -> Response {
        let info = &state.engine.info;
        let params = match self.knobs.params(info, &self.prompt, "messages") {
            Ok(p) => p,
            Err(e) => return e.into_response(),
        };
        let prompt_tokens = self.prompt.len();
        let mut rx = match state
            .engine
            .submit_marked(self.prompt, params, Some(self.marks))
        {
            Ok(rx) => rx,
            Err(e) => return e.into_response(),
        };
        state.engine.metrics.prompt(prompt_tokens);
        let envelope = Envelope {
            id: random_id("chatcmpl-"),
            created: now_secs(),
            model: info.name.clone(),
        };
        let mut output = ChatOutput::new(self.knobs.stops(), self.thinking, self.tools);
        if self.stream {
            return stream(envelope, output, rx, prompt_tokens, self.include_usage).into_response();
        }
        let mut all = ChatDelta::default();
        let mut completion = 0;
        let reason = loop {
            match rx.recv().await {
                Some(JobEvent::Text { text, tokens }) => {
                    completion += tokens;
                    let (delta, hit) = output.push(&text);
                    all.tool_calls.extend(delta.tool_calls);
                    all.reasoning.push_str(&delta.reasoning);
                    all.content.push_str(&delta.content);
                    if hit {
                        break None;
                    }
                }
                Some(JobEvent::Done(reason)) => break Some(reason),
                Some(JobEvent::Failed(message)) => {
                    return ApiError::internal(message).into_response();
                }
                None => {
                    return ApiError::internal("the engine stopped during generation")
                        .into_response();
                }
            }
        };
        drop(rx);
        let tail = output.finish();
        all.reasoning.push_str(&tail.reasoning);
        all.content.push_str(&tail.content);
        all.tool_calls.extend(tail.tool_calls);
        let text = |s: &str| {
            let s = s.trim();
            if s.is_empty() { Value::Null } else { s.into() }
        };
        let mut message = json!({"role": "assistant", "content": text(&all.content),
            "reasoning_content": text(&all.reasoning)});
        if !all.tool_calls.is_empty() {
            let mut calls = tool_calls_json(&all.tool_calls, 0);
            for c in &mut calls {
                if let Some(obj) = c.as_object_mut() {
                    obj.remove("index");
                }
            }
            message["tool_calls"] = calls.into();
        }
        axum::Json(json!({
            "id": envelope.id, "object": "chat.completion", "created": envelope.created,
            "model": envelope.model,
            "choices": [{"index": 0, "message": message, "logprobs": null,
                "finish_reason": finish_name(reason, !all.tool_calls.is_empty())}],
            "usage": usage(prompt_tokens, completion),
        }))
        .into_response()
    }
}

fn data(value: &Value) -> Result<Event, Infallible> {
    Ok(Event::default().data(value.to_string()))
}

/// The SSE response: a role chunk, reasoning/content/tool-call deltas, a finish chunk, an
/// optional usage chunk, then `[DONE]`. Dropping it (client gone) drops `rx`, which cancels
/// the generation on the engine thread.
fn stream(
    envelope: Envelope,
    mut output: ChatOutput,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<JobEvent>,
    prompt_tokens: usize,
    include_usage: bool,
) -> impl IntoResponse {
    let events = async_stream::stream! {
        yield data(&envelope.chunk(json!({"role": "assistant", "content": ""}), None));
        let mut completion = 0;
        let mut calls = 0;
        let mut begun = Begun::default();
        let reason = loop {
            let (delta, stopped) = match rx.recv().await {
                Some(JobEvent::Text { text, tokens }) => {
                    completion += tokens;
                    let (delta, hit) = output.push(&text);
                    (delta, hit.then_some(None))
                }
                Some(JobEvent::Done(reason)) => (output.finish(), Some(Some(reason))),
                Some(JobEvent::Failed(message)) => {
                    yield data(&ApiError::internal(message).body());
                    yield Ok(Event::default().data("[DONE]"));
                    return;
                }
                None => {
                    yield data(&ApiError::internal("the engine stopped during generation").body());
                    yield Ok(Event::default().data("[DONE]"));
                    return;
                }
            };
            for chunk in delta_chunks(&envelope, begun.trim(delta), &mut calls) {
                yield data(&chunk);
            }
            if let Some(reason) = stopped {
                break reason;
            }
        };
        drop(rx);
        yield data(&envelope.chunk(json!({}), Some(finish_name(reason, calls > 0))));
        if include_usage {
            let mut last = envelope.chunk(json!({}), None);
            last["choices"] = json!([]);
            last["usage"] = usage(prompt_tokens, completion);
            yield data(&last);
        }
        yield Ok(Event::default().data("[DONE]"));
    };
    Sse::new(events).keep_alive(KeepAlive::default())
}

/// Whether the reasoning and the content have shown any text yet. The whitespace before
/// each one's first text is dropped, as the whole message's `reasoning_content` and
/// `content` are trimmed, so a stream adds up to the same text (the template's newline
/// after `<think>` is not reasoning).
#[derive(Default)]
struct Begun {
    reasoning: bool,
    content: bool,
}

impl Begun {
    fn trim(&mut self, mut delta: ChatDelta) -> ChatDelta {
        for (begun, text) in [
            (&mut self.reasoning, &mut delta.reasoning),
            (&mut self.content, &mut delta.content),
        ] {
            if !*begun {
                let rest = text.trim_start();
                *begun = !rest.is_empty();
                *text = rest.to_string();
            }
        }
        delta
    }
}

/// One chunk per kind of change in `delta`: reasoning, content, tool calls.
fn delta_chunks(envelope: &Envelope, delta: ChatDelta, calls: &mut usize) -> Vec<Value> {
    let mut out = Vec::new();
    if !delta.reasoning.is_empty() {
        out.push(envelope.chunk(json!({"reasoning_content": delta.reasoning}), None));
    }
    if !delta.content.is_empty() {
        out.push(envelope.chunk(json!({"content": delta.content}), None));
    }
    if !delta.tool_calls.is_empty() {
        let entries = tool_calls_json(&delta.tool_calls, *calls);
        *calls += delta.tool_calls.len();
        out.push(envelope.chunk(json!({"tool_calls": entries}), None));
    }
    out
}
