//! Load on loopback with the demo model: many concurrent streaming clients, every response
//! complete and well-formed, greedy outputs equal to the same prompts run one at a time, and
//! the batching speed-up and latency percentiles printed (run with `--nocapture` to see them).
//!
//! Defaults follow the issue: 64 clients × 10 requests, 16 tokens each. The speed-up is
//! printed, not asserted: on a shared CPU it moves with the machine's load, and on the toy
//! demo model a short prompt's prefill (run alone, not batched) costs about as much as its
//! decode, which caps the gain (see crates/serve/README.md).
//! `AGENTWORLD_LOAD_CLIENTS`, `AGENTWORLD_LOAD_REQUESTS` and `AGENTWORLD_LOAD_TOKENS` change
//! them.

mod common;

use std::time::{Duration, Instant};

use common::{assemble, chat, config, parse_sse, real};
use serde_json::Value;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const COMMANDS: [&str; 16] = [
    "ls",
    "ls -la",
    "pwd",
    "cat notes.txt",
    "echo hi",
    "cd /tmp",
    "whoami",
    "date",
    "mkdir build",
    "touch a.txt",
    "rm a.txt",
    "python3 --version",
    "git status",
    "df -h",
    "head -n 3 notes.txt",
    "wc -l notes.txt",
];

/// One finished streaming request: its text and token count, and its latency.
struct Outcome {
    prompt: usize,
    text: String,
    tokens: u64,
    latency: Duration,
}

async fn run_one(client: &reqwest::Client, url: &str, prompt: usize, tokens: usize) -> Outcome {
    let mut body = chat(COMMANDS[prompt], tokens as u32);
    body["stream"] = true.into();
    body["stream_options"] = serde_json::json!({"include_usage": true});
    let started = Instant::now();
    let r = client
        .post(url)
        .json(&body)
        .send()
        .await
        .expect("request sent");
    assert_eq!(r.status(), 200, "every request is accepted");
    let text = r.text().await.expect("stream read to the end");
    let latency = started.elapsed();
    let chunks: Vec<Value> = parse_sse(&text);
    let a = assemble(&chunks);
    assert!(["stop", "length"].contains(&a.finish_reason.as_str()));
    let usage = a.usage.expect("usage chunk");
    let n = usage["completion_tokens"].as_u64().unwrap();
    assert!((1..=tokens as u64).contains(&n), "{usage}");
    Outcome {
        prompt,
        text: format!("{}\u{0}{}", a.reasoning, a.content),
        tokens: n,
        latency,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_streaming_clients_all_complete_and_batching_pays() {
    let clients = env("AGENTWORLD_LOAD_CLIENTS", 64);
    let per_client = env("AGENTWORLD_LOAD_REQUESTS", 10);
    let tokens = env("AGENTWORLD_LOAD_TOKENS", 16);
    let s = real(config(clients.max(1), clients * per_client + 8)).await;
    let url = format!("{}/v1/chat/completions", s.base);

    // Baseline: each distinct prompt alone.
    let mut alone = Vec::new();
    let started = Instant::now();
    for prompt in 0..COMMANDS.len() {
        alone.push(run_one(&s.client, &url, prompt, tokens).await);
    }
    let seq_secs = started.elapsed().as_secs_f64();
    let seq_tokens: u64 = alone.iter().map(|o| o.tokens).sum();
    let seq_rate = seq_tokens as f64 / seq_secs;
    let mut seq_latency: Vec<Duration> = alone.iter().map(|o| o.latency).collect();
    seq_latency.sort();

    // Load: every client sends its requests back to back.
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let client = s.client.clone();
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for r in 0..per_client {
                let prompt = (c * per_client + r) % COMMANDS.len();
                out.push(run_one(&client, &url, prompt, tokens).await);
            }
            out
        }));
    }
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.extend(t.await.expect("client task"));
    }
    let load_secs = started.elapsed().as_secs_f64();
    assert_eq!(outcomes.len(), clients * per_client, "no request lost");
    for o in &outcomes {
        assert_eq!(
            o.text, alone[o.prompt].text,
            "prompt {} under load equals the prompt alone",
            o.prompt
        );
    }
    let load_tokens: u64 = outcomes.iter().map(|o| o.tokens).sum();
    let load_rate = load_tokens as f64 / load_secs;
    let mut latency: Vec<Duration> = outcomes.iter().map(|o| o.latency).collect();
    latency.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "load: {clients} clients x {per_client} requests x <= {tokens} tokens: {} requests, \
         {load_tokens} tokens in {load_secs:.2} s = {load_rate:.1} tok/s; one at a time: \
         {seq_tokens} tokens in {seq_secs:.2} s = {seq_rate:.1} tok/s; batching speed-up \
         {:.2}x; latency p50 {:.0} ms, p99 {:.0} ms (alone: p50 {:.0} ms, p99 {:.0} ms)",
        outcomes.len(),
        load_rate / seq_rate,
        ms(percentile(&latency, 0.50)),
        ms(percentile(&latency, 0.99)),
        ms(percentile(&seq_latency, 0.50)),
        ms(percentile(&seq_latency, 0.99)),
    );
    assert_eq!(s.metric("agentworld_queue_depth").await, 0.0);
    assert_eq!(s.metric("agentworld_running_batch_size").await, 0.0);
}
