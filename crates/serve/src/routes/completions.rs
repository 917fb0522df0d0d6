//! `POST /v1/completions`: raw text in, raw text out (no chat template, no reasoning split).

use std::convert::Infallible;
use std::sync::Arc;

use agentworld_engine::{FinishReason, PromptMarks};
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;
use crate::request::{
    Knobs, Stop, StreamOptions, encode_chat_prompt, marks_for_ids, now_secs, parse_body, random_id,
};
use crate::scheduler::JobEvent;
use crate::stop::StopMatcher;

#[derive(Debug, Deserialize)]
struct CompletionRequest {
    model: Option<String>,
    prompt: Prompt,
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
    max_tokens: Option<i64>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    top_k: Option<i64>,
    copy_bias: Option<f64>,
    seed: Option<i64>,
    n: Option<i64>,
    stop: Option<Stop>,
}

/// A prompt as text or token ids; lists must hold exactly one prompt.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Prompt {
    Text(String),
    Texts(Vec<String>),
    Ids(Vec<u32>),
    IdLists(Vec<Vec<u32>>),
}

/// Handles a text completion, streaming or not.
pub async fn handle(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let response = match run(&state, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    state
        .engine
        .metrics
        .request("completions", response.status().as_u16());
    response
}

/// The one prompt of a request, tokenized with its marks for the copy prior when it is text
/// (`None` for ids, which are checked against the vocabulary first:
/// [`crate::request::marks_for_ids`]).
fn one_prompt(
    prompt: Prompt,
    tokenize: impl Fn(&str) -> Result<(Vec<u32>, PromptMarks), ApiError>,
) -> Result<(Vec<u32>, Option<PromptMarks>), ApiError> {
    let many = |n: usize| {
        ApiError::bad_request(
            Some("prompt"),
            format!(
                "This server completes one prompt per request; `prompt` holds {n}. Send them as separate requests."
            ),
        )
    };
    let (ids, marks) = match prompt {
        Prompt::Text(t) => tokenize(&t).map(|(ids, m)| (ids, Some(m)))?,
        Prompt::Texts(v) if v.len() == 1 => tokenize(&v[0]).map(|(ids, m)| (ids, Some(m)))?,
        Prompt::Texts(v) => return Err(many(v.len())),
        Prompt::Ids(ids) => (ids, None),
        Prompt::IdLists(mut v) if v.len() == 1 => (v.remove(0), None),
        Prompt::IdLists(v) => return Err(many(v.len())),
    };
    if ids.is_empty() {
        return Err(ApiError::bad_request(
            Some("prompt"),
            "`prompt` is empty; send some text.",
        ));
    }
    Ok((ids, marks))
}

async fn run(state: &AppState, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let request: CompletionRequest = parse_body(body)?;
    let info = &state.engine.info;
    if let Some(model) = &request.model
        && model != &info.name
    {
        return Err(ApiError::unknown_model(model, &info.name));
    }
    let knobs = Knobs {
        max_tokens: request.max_tokens.map(|n| (n, "max_tokens")),
        temperature: request.temperature,
        top_p: request.top_p,
        top_k: request.top_k,
        copy_bias: request.copy_bias,
        seed: request.seed,
        n: request.n,
        stop: request.stop,
    };
    knobs.validate()?;
    let named_bias = knobs.named_bias();
    let (prompt, marks) = one_prompt(request.prompt, |t| {
        encode_chat_prompt(info, t, named_bias)
            .map_err(|e| ApiError::internal(format!("tokenizing the prompt failed: {e}")))
    })?;
    let vocab = info.tokenizer.vocab_size();
    if let Some(bad) = prompt.iter().find(|&&t| t as usize >= vocab) {
        return Err(ApiError::bad_request(
            Some("prompt"),
            format!("Token id {bad} is outside the vocabulary ({vocab} tokens)."),
        ));
    }
    let marks = marks.unwrap_or_else(|| marks_for_ids(info, &prompt, named_bias));
    let params = knobs.params(info, &prompt, "prompt")?;
    let prompt_tokens = prompt.len();
    let mut rx = state.engine.submit_marked(prompt, params, Some(marks))?;
    state.engine.metrics.prompt(prompt_tokens);
    let id = random_id("cmpl-");
    let created = now_secs();
    let model = info.name.clone();
    let chunk = move |text: &str, finish: Option<&str>| {
        json!({"id": id, "object": "text_completion", "created": created, "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": finish}]})
    };
    let mut stop = StopMatcher::new(knobs.stops());
    let include_usage = request
        .stream_options
        .and_then(|o| o.include_usage)
        .unwrap_or(false);
    let usage = move |completion: usize| {
        json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion})
    };

    if request.stream.unwrap_or(false) {
        let events = async_stream::stream! {
            let mut completion = 0;
            let reason = loop {
                match rx.recv().await {
                    Some(JobEvent::Text { text, tokens }) => {
                        completion += tokens;
                        let (safe, hit) = stop.push(&text);
                        if !safe.is_empty() {
                            yield data(&chunk(&safe, None));
                        }
                        if hit {
                            break None;
                        }
                    }
                    Some(JobEvent::Done(reason)) => {
                        let rest = stop.finish();
                        if !rest.is_empty() {
                            yield data(&chunk(&rest, None));
                        }
                        break Some(reason);
                    }
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
                }
            };
            drop(rx);
            yield data(&chunk("", Some(finish_name(reason))));
            if include_usage {
                let mut last = chunk("", None);
                last["choices"] = json!([]);
                last["usage"] = usage(completion);
                yield data(&last);
            }
            yield Ok(Event::default().data("[DONE]"));
        };
        return Ok(Sse::new(events)
            .keep_alive(KeepAlive::default())
            .into_response());
    }

    let mut text = String::new();
    let mut completion = 0;
    let reason = loop {
        match rx.recv().await {
            Some(JobEvent::Text {
                text: piece,
                tokens,
            }) => {
                completion += tokens;
                let (safe, hit) = stop.push(&piece);
                text.push_str(&safe);
                if hit {
                    break None;
                }
            }
            Some(JobEvent::Done(reason)) => {
                text.push_str(&stop.finish());
                break Some(reason);
            }
            Some(JobEvent::Failed(message)) => return Err(ApiError::internal(message)),
            None => return Err(ApiError::internal("the engine stopped during generation")),
        }
    };
    drop(rx);
    let mut body = chunk(&text, Some(finish_name(reason)));
    body["object"] = "text_completion".into();
    body["usage"] = usage(completion);
    Ok(axum::Json(body).into_response())
}

fn finish_name(reason: Option<FinishReason>) -> &'static str {
    match reason {
        Some(FinishReason::Length) => "length",
        _ => "stop",
    }
}

fn data(value: &Value) -> Result<Event, Infallible> {
    Ok(Event::default().data(value.to_string()))
}
