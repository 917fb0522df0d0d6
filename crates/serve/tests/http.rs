//! The server on the demo model, over loopback HTTP: protocol shape, streaming, batching
//! equivalence, errors and cancellation. Generated text is never compared with fixed strings
//! (the demo model is retrained from time to time), only with itself.

mod common;

use std::time::Duration;

use common::{assemble, chat, config, real};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_health_and_metrics() {
    let s = real(config(4, 8)).await;
    let (status, body) = s.get("/v1/models").await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][0]["id"], "agentworld-demo");
    assert_eq!(v["data"][0]["object"], "model");
    assert_eq!(s.get("/health").await.0, 200);

    let (status, _) = s.post("/v1/chat/completions", &chat("ls", 3)).await;
    assert_eq!(status, 200);
    let (status, text) = s.get("/metrics").await;
    assert_eq!(status, 200);
    for name in [
        "agentworld_requests_total",
        "agentworld_prompt_tokens_total",
        "agentworld_generation_tokens_total",
        "agentworld_queue_depth",
        "agentworld_running_batch_size",
        "agentworld_generation_tokens_per_second",
    ] {
        assert!(
            text.contains(&format!("# TYPE {name} ")),
            "{name} in {text}"
        );
    }
    assert!(s.metric("agentworld_generation_tokens_total").await >= 1.0);
    assert!(
        text.contains("endpoint=\"chat\",status=\"200\"} 1"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completion_shape_and_stream_equal_non_stream() {
    let s = real(config(4, 8)).await;
    let request = chat("cat notes.txt", 40);
    let (status, v) = s.post("/v1/chat/completions", &request).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["object"], "chat.completion");
    assert!(v["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(v["model"], "agentworld-demo");
    let choice = &v["choices"][0];
    assert_eq!(choice["message"]["role"], "assistant");
    assert!(["stop", "length"].contains(&choice["finish_reason"].as_str().unwrap()));
    let message = &choice["message"];
    assert!(message["content"].is_string() || message["reasoning_content"].is_string());
    for part in ["content", "reasoning_content"] {
        let text = message[part].as_str().unwrap_or("");
        assert!(
            !text.contains("<think>") && !text.contains("</think>"),
            "{v}"
        );
    }
    let usage = &v["usage"];
    let completion = usage["completion_tokens"].as_u64().unwrap();
    assert!((1..=40).contains(&completion));
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["prompt_tokens"].as_u64().unwrap() + completion
    );

    let mut streamed = request.clone();
    streamed["stream"] = true.into();
    streamed["stream_options"] = json!({"include_usage": true});
    let chunks = s.stream("/v1/chat/completions", &streamed).await;
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let a = assemble(&chunks);
    let trim = |s: &str| s.trim().to_owned();
    assert_eq!(
        trim(&a.reasoning),
        trim(message["reasoning_content"].as_str().unwrap_or(""))
    );
    assert_eq!(
        trim(&a.content),
        trim(message["content"].as_str().unwrap_or(""))
    );
    assert_eq!(a.finish_reason, choice["finish_reason"].as_str().unwrap());
    assert_eq!(a.usage.as_ref().unwrap(), usage);
    assert!(
        chunks.last().unwrap()["choices"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Thinking off: the template closes the think block, everything is content.
    let mut off = chat("cat notes.txt", 20);
    off["chat_template_kwargs"] = json!({"enable_thinking": false});
    let (status, v) = s.post("/v1/chat/completions", &off).await;
    assert_eq!(status, 200, "{v}");
    assert!(
        v["choices"][0]["message"]["reasoning_content"].is_null(),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_equal_one_at_a_time() {
    // A batch of 3 for 6 requests: some wait, then join the running batch mid-flight.
    let s = real(config(3, 16)).await;
    let prompts = [
        "ls -la",
        "cat notes.txt",
        "pwd",
        "echo hello > a.txt",
        "cd /tmp && ls",
        "python3 --version",
    ];
    let lengths = [30, 12, 25, 8, 30, 18];
    let mut alone = Vec::new();
    for (p, n) in prompts.iter().zip(lengths) {
        let (status, v) = s.post("/v1/chat/completions", &chat(p, n)).await;
        assert_eq!(status, 200, "{v}");
        alone.push(v["choices"][0]["message"].clone());
    }
    let mut tasks = Vec::new();
    for (i, (p, n)) in prompts.iter().zip(lengths).enumerate() {
        let client = s.client.clone();
        let url = format!("{}/v1/chat/completions", s.base);
        let mut body = chat(p, n);
        let stream = i % 2 == 0;
        body["stream"] = stream.into();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(15 * i as u64)).await;
            let r = client.post(url).json(&body).send().await.unwrap();
            assert_eq!(r.status(), 200);
            let text = r.text().await.unwrap();
            if stream {
                let a = assemble(&common::parse_sse(&text));
                let some = |s: String| {
                    let t = s.trim().to_owned();
                    if t.is_empty() { Value::Null } else { t.into() }
                };
                json!({"role": "assistant", "content": some(a.content),
                    "reasoning_content": some(a.reasoning)})
            } else {
                serde_json::from_str::<Value>(&text).unwrap()["choices"][0]["message"].clone()
            }
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        assert_eq!(t.await.unwrap(), alone[i], "request {i} batched vs alone");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_completions() {
    let s = real(config(4, 8)).await;
    let body = json!({"model": "agentworld-demo", "prompt": "<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n",
        "max_tokens": 12, "temperature": 0});
    let (status, v) = s.post("/v1/completions", &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["object"], "text_completion");
    let text = v["choices"][0]["text"].as_str().unwrap().to_owned();
    assert!(v["usage"]["completion_tokens"].as_u64().unwrap() <= 12);

    let mut streamed = body.clone();
    streamed["stream"] = true.into();
    let chunks = s.stream("/v1/completions", &streamed).await;
    let joined: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["text"].as_str())
        .collect();
    assert_eq!(joined, text);
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        v["choices"][0]["finish_reason"]
    );

    let ids = json!({"prompt": [[5, 6, 7]], "max_tokens": 3});
    assert_eq!(s.post("/v1/completions", &ids).await.0, 200);
    let (status, v) = s
        .post(
            "/v1/completions",
            &json!({"prompt": ["a", "b"], "max_tokens": 3}),
        )
        .await;
    assert_eq!(
        (status, v["error"]["param"].as_str()),
        (400, Some("prompt"))
    );
    let (status, v) = s
        .post(
            "/v1/completions",
            &json!({"prompt": [99999999], "max_tokens": 3}),
        )
        .await;
    assert_eq!(
        (status, v["error"]["param"].as_str()),
        (400, Some("prompt")),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_openai_errors_naming_the_field() {
    let mut cfg = config(2, 4);
    cfg.max_model_len = Some(300);
    let s = real(cfg).await;
    let user = json!([{"role": "user", "content": "ls"}]);
    let cases: Vec<(String, u16, Option<&str>)> = vec![
        ("{\"messages\": [".into(), 400, None),
        ("[1, 2]".into(), 400, None),
        (json!({"model": "gpt-4o", "messages": user}).to_string(), 404, Some("model")),
        (json!({"messages": []}).to_string(), 400, Some("messages")),
        (json!({}).to_string(), 400, Some("messages")),
        (json!({"messages": [{"role": "wizard", "content": "x"}]}).to_string(), 400, Some("messages[0].role")),
        (json!({"messages": [{"role": "user"}]}).to_string(), 400, Some("messages[0].content")),
        (json!({"messages": user, "max_tokens": 0}).to_string(), 400, Some("max_tokens")),
        (json!({"messages": user, "max_tokens": -3}).to_string(), 400, Some("max_tokens")),
        (json!({"messages": user, "max_completion_tokens": 0}).to_string(), 400, Some("max_completion_tokens")),
        (json!({"messages": user, "max_tokens": "ten"}).to_string(), 400, Some("max_tokens")),
        (json!({"messages": user, "temperature": 9}).to_string(), 400, Some("temperature")),
        (json!({"messages": user, "top_p": 0}).to_string(), 400, Some("top_p")),
        (json!({"messages": user, "n": 2}).to_string(), 400, Some("n")),
        (json!({"messages": user, "stop": 5}).to_string(), 400, Some("stop")),
        (json!({"messages": user, "chat_template_kwargs": {"enable_thinking": "yes"}}).to_string(), 400, Some("chat_template_kwargs.enable_thinking")),
        (json!({"messages": [{"role": "user", "content": "word ".repeat(400)}]}).to_string(), 400, Some("messages")),
        (json!({"messages": [{"role": "assistant", "content": "hi"}]}).to_string(), 400, Some("messages")),
        (json!({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}, {"role": "user", "content": "x"}]}).to_string(), 400, Some("messages[0].tool_calls[0].function.arguments")),
    ];
    for (body, status, param) in cases {
        let (got, _, text) = s.post_raw("/v1/chat/completions", body.clone()).await;
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{body}: {text}"));
        assert_eq!(got, status, "{body} -> {v}");
        let error = &v["error"];
        assert!(!error["message"].as_str().unwrap().is_empty());
        assert!(error["type"].is_string());
        assert_eq!(error["param"].as_str(), param, "{body} -> {v}");
    }
    let (status, text) = s.get("/v2/nothing").await;
    assert_eq!(status, 404);
    assert!(text.contains("/v1/chat/completions"), "{text}");
    // The server is still fine.
    assert_eq!(s.post("/v1/chat/completions", &chat("ls", 2)).await.0, 200);
    assert!(s.metric("agentworld_requests_total").await >= 1.0);
}
