//! Protocol tests with scripted model output (the HTTP, batching and parsing code is real,
//! the "model" replies with fixed pieces, one per token): tool calls, reasoning split across
//! tokens, stop strings, a full queue.

mod common;

use std::time::Duration;

use common::{assemble, config, scripted};
use serde_json::{Value, json};

fn pieces(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Tag-hostile splits: every tag is cut in the middle.
const CALL: &[&str] = &[
    "I should cl",
    "ick it.\n</th",
    "ink>",
    "\n\nClicking",
    " now.\n<tool",
    "_call>\n<func",
    "tion=click>\n<parameter=",
    "element_id>\n7\n</param",
    "eter>\n</function>\n</tool_",
    "call>",
];

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "click", "description": "Click an element",
        "parameters": {"type": "object", "properties": {"element_id": {"type": "integer"}},
            "required": ["element_id"]}}}])
}

fn request(content: &str, stream: bool) -> Value {
    json!({"model": "agentworld-demo", "messages": [{"role": "user", "content": content}],
        "tools": tools(), "stream": stream})
}

async fn server() -> common::Server {
    scripted(
        |prompt| {
            if prompt.contains("please panic") {
                panic!("scripted panic");
            }
            let reply: &[&str] = if prompt.contains("draft") {
                &["maybe <tool_call>\n{\"name\": \"click\", \"argu", "ments\": {\"element_id\": 7}}\n</tool_call> yes",
                  "</think>\n\n", "<tool_call>\n<function=click>\n<parameter=element_id>\n7\n</parameter>\n</function>\n</tool_call>"]
            } else if prompt.contains("only-think") {
                &["<tool_call>\n{\"name\": \"click\", \"arguments\": {\"element_id\": 2}}\n</tool_call>", "</think>\n\nDone."]
            } else if prompt.contains("misfit") {
                &["ok</think>\n\n<tool_call>\n<function=click>\n<parameter=element_id>\nthe blue one\n</parameter>\n</function>\n</tool_call>"]
            } else if prompt.contains("leading") {
                &["\n", "\nLooking", " closer.", "</think>", "\n\n", "Done", " here."]
            } else if prompt.contains("stop") {
                &["thinking</think>\n\nalpha be", "ta gam", "ma"]
            } else {
                CALL
            };
            pieces(reply)
        },
        Duration::from_millis(1),
        config(4, 8),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_non_streaming() {
    let s = server().await;
    let (status, v) = s
        .post("/v1/chat/completions", &request("click it", false))
        .await;
    assert_eq!(status, 200, "{v}");
    let choice = &v["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    let m = &choice["message"];
    assert_eq!(m["reasoning_content"], "I should click it.");
    assert_eq!(m["content"], "Clicking now.");
    let calls = m["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["type"], "function");
    assert!(calls[0]["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(calls[0]["function"]["name"], "click");
    let args: Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"element_id": 7}), "typed by the schema");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_streaming_never_leak_a_split_tag() {
    let s = server().await;
    let chunks = s
        .stream("/v1/chat/completions", &request("click it", true))
        .await;
    for c in &chunks {
        let delta = &c["choices"][0]["delta"];
        for part in ["content", "reasoning_content"] {
            let text = delta[part].as_str().unwrap_or("");
            assert!(
                !text.contains('<') && !text.contains('>'),
                "a tag leaked: {c}"
            );
        }
    }
    let a = assemble(&chunks);
    assert_eq!(a.reasoning.trim(), "I should click it.");
    assert_eq!(a.content.trim(), "Clicking now.");
    assert_eq!(a.finish_reason, "tool_calls");
    assert_eq!(a.tool_calls.len(), 1);
    assert_eq!(a.tool_calls[0]["function"]["name"], "click");
    assert_eq!(
        a.tool_calls[0]["function"]["arguments"],
        "{\"element_id\":7}"
    );
}

/// A stream adds up to the message a non-streaming request gets: the whitespace before the
/// reasoning and before the answer is not sent (the message's fields are trimmed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_adds_up_to_the_trimmed_message() {
    let s = server().await;
    let (_, v) = s
        .post("/v1/chat/completions", &request("leading", false))
        .await;
    let m = &v["choices"][0]["message"];
    assert_eq!(m["reasoning_content"], "Looking closer.");
    assert_eq!(m["content"], "Done here.");
    let a = assemble(
        &s.stream("/v1/chat/completions", &request("leading", true))
            .await,
    );
    assert_eq!(a.reasoning, "Looking closer.");
    assert_eq!(a.content, "Done here.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_drafted_in_the_thinking() {
    let s = server().await;
    for stream in [false, true] {
        // Drafted (JSON) in the thinking, repeated (XML) after it: one call.
        let calls = if stream {
            assemble(
                &s.stream("/v1/chat/completions", &request("draft", true))
                    .await,
            )
            .tool_calls
        } else {
            let (_, v) = s
                .post("/v1/chat/completions", &request("draft", false))
                .await;
            v["choices"][0]["message"]["tool_calls"]
                .as_array()
                .unwrap()
                .clone()
        };
        assert_eq!(calls.len(), 1, "stream {stream}: {calls:?}");
        assert_eq!(calls[0]["function"]["arguments"], "{\"element_id\":7}");

        // Only in the thinking: still returned.
        let (_, v) = s
            .post("/v1/chat/completions", &request("only-think", false))
            .await;
        let m = &v["choices"][0]["message"];
        assert_eq!(
            m["tool_calls"][0]["function"]["arguments"], "{\"element_id\":2}",
            "{v}"
        );
        assert_eq!(m["content"], "Done.");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_that_misfits_its_type_keeps_the_call() {
    let s = server().await;
    let (_, v) = s
        .post("/v1/chat/completions", &request("misfit", false))
        .await;
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(
        call["function"]["arguments"], "{\"element_id\":\"the blue one\"}",
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tools_or_with_tool_choice_none_blocks_stay_text() {
    let s = server().await;
    let mut body = request("click it", false);
    body["tool_choice"] = "none".into();
    let (_, v) = s.post("/v1/chat/completions", &body).await;
    let m = &v["choices"][0]["message"];
    assert!(m.get("tool_calls").is_none(), "{v}");
    assert!(m["content"].as_str().unwrap().contains("<tool_call>"));
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_strings_split_across_tokens() {
    let s = server().await;
    for stream in [false, true] {
        let body = json!({"messages": [{"role": "user", "content": "stop"}], "stop": ["beta"],
            "stream": stream});
        let (content, finish) = if stream {
            let a = assemble(&s.stream("/v1/chat/completions", &body).await);
            (a.content, a.finish_reason)
        } else {
            let (_, v) = s.post("/v1/chat/completions", &body).await;
            (
                v["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                v["choices"][0]["finish_reason"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        };
        assert_eq!(
            (content.trim(), finish.as_str()),
            ("alpha", "stop"),
            "stream {stream}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_gets_503_with_retry_after() {
    // One running sequence, one waiting: the third request is refused.
    let long: Vec<String> = (0..2000).map(|i| format!("w{i} ")).collect();
    let s = scripted(
        move |_| long.clone(),
        Duration::from_millis(5),
        config(1, 1),
    )
    .await;
    let body = json!({"messages": [{"role": "user", "content": "go"}], "stream": true});
    let send = || {
        s.client
            .post(format!("{}/v1/chat/completions", s.base))
            .json(&body)
            .send()
    };
    let mut running = send().await.unwrap();
    assert_eq!(running.status(), 200);
    running.chunk().await.unwrap();
    running.chunk().await.unwrap();
    let waiting = send().await.unwrap();
    assert_eq!(waiting.status(), 200, "accepted into the queue");
    let refused = send().await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    let v: Value = refused.json().await.unwrap();
    assert_eq!(v["error"]["code"], "queue_full");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-queue")
    );
    drop(running);
    drop(waiting);
    // Once they are gone the server takes requests again.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mut body = body.clone();
        body["max_tokens"] = 2.into();
        body["stream"] = false.into();
        let (status, _) = s.post("/v1/chat/completions", &body).await;
        if status == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still refused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_cancels_its_generation() {
    let long: Vec<String> = (0..5000).map(|i| format!("w{i} ")).collect();
    let s = scripted(
        move |_| long.clone(),
        Duration::from_millis(2),
        config(2, 4),
    )
    .await;
    let body = json!({"messages": [{"role": "user", "content": "go"}], "stream": true});
    let client = reqwest::Client::new();
    let mut r = client
        .post(format!("{}/v1/chat/completions", s.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    for _ in 0..3 {
        r.chunk().await.unwrap().expect("the stream is running");
    }
    drop(r);
    drop(client);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let cancelled = s.metric("agentworld_requests_cancelled_total").await;
        let running = s.metric("agentworld_running_batch_size").await;
        if cancelled >= 1.0 && running == 0.0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the generation was not cancelled: {cancelled} {running}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let generated = s.metric("agentworld_generation_tokens_total").await;
    assert!(generated < 4000.0, "stopped early: {generated} tokens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_engine_costs_one_request_not_the_server() {
    let s = server().await;
    for stream in [false, true] {
        let body = json!({"messages": [{"role": "user", "content": "please panic"}],
            "stream": stream});
        let (status, _, text) = s.post_raw("/v1/chat/completions", body.to_string()).await;
        if stream {
            assert_eq!(status, 200);
            let chunks = common::parse_sse(&text);
            let last = chunks.last().unwrap();
            assert!(
                last["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("scripted panic"),
                "{text}"
            );
        } else {
            assert_eq!(status, 500, "{text}");
            assert!(text.contains("scripted panic"), "{text}");
        }
    }
    assert_eq!(s.get("/health").await.0, 200);
    let (status, v) = s
        .post("/v1/chat/completions", &request("click it", false))
        .await;
    assert_eq!(status, 200, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_streaming_client_that_gives_up_cancels_too() {
    let long: Vec<String> = (0..5000).map(|i| format!("w{i} ")).collect();
    let s = scripted(
        move |_| long.clone(),
        Duration::from_millis(2),
        config(2, 4),
    )
    .await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let body = json!({"messages": [{"role": "user", "content": "go"}]});
    let r = client
        .post(format!("{}/v1/chat/completions", s.base))
        .json(&body)
        .send()
        .await;
    assert!(r.is_err(), "the client timed out");
    drop(client);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let cancelled = s.metric("agentworld_requests_cancelled_total").await;
        if cancelled >= 1.0 && s.metric("agentworld_running_batch_size").await == 0.0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the generation was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn settings_the_model_cannot_honour_are_refused_at_start() {
    use agentworld_serve::EngineHandle;
    use agentworld_serve::testing::ScriptedBatch;
    let start = |cfg: agentworld_serve::ServeConfig| {
        let script: agentworld_serve::testing::Script = std::sync::Arc::new(|_: &[u32]| vec![]);
        EngineHandle::spawn_batch(
            common::demo_text(),
            ScriptedBatch::new(script, Duration::ZERO),
            &cfg,
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let mut cfg = config(4, 8);
    cfg.max_model_len = Some(4096);
    let e = start(cfg).unwrap_err();
    assert!(
        e.contains("--max-model-len 4096") && e.contains("2048"),
        "{e}"
    );
    let e = start(config(0, 8)).unwrap_err();
    assert!(e.contains("--max-batch"), "{e}");
    let e = start(config(4, 0)).unwrap_err();
    assert!(e.contains("--max-queue"), "{e}");
    assert!(start(config(4, 8)).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_methods_get_json_errors() {
    let s = server().await;
    let (status, text) = s.get("/v1/chat/completions").await;
    assert_eq!(status, 405);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], "method_not_allowed");
    // The client's mistake, as OpenAI types it, not the server's.
    assert_eq!(v["error"]["type"], "invalid_request_error");
}
