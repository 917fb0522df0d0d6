//! `agentworld serve` as users run it: the real binary on a free loopback port, talked to by
//! clients nobody here wrote (`curl`, the official `openai` Python package) and by our own
//! `simulate --endpoint` and `eval infer --endpoint`.

mod common;
use common::{Serve, agentworld, repo, text};

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use agentworld_serve::testing::{Script, ScriptedBatch};
use agentworld_serve::{EngineHandle, ModelText, ServeConfig};
use agentworld_text::{ChatTemplate, GenerationConfig, Tokenizer};

fn demo() -> PathBuf {
    repo().join("public/models/agentworld-demo")
}

#[test]
fn simulate_and_eval_infer_work_against_agentworld_serve() {
    let server = Serve::start(&[]);
    let out = agentworld(&[
        "simulate",
        "--endpoint",
        &server.url,
        "--domain",
        "terminal",
        "--state",
        "examples/terminal/screen1.txt",
        "--action",
        r#"[{"keystrokes": "ls\n", "duration": 0.5}]"#,
        "--max-tokens",
        "120",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(v["domain"], "terminal");
    assert!(v["tokens"].as_u64().unwrap() >= 1, "usage came back: {v}");

    let tmp = tempfile::tempdir().unwrap();
    let pred = tmp.path().join("pred.jsonl");
    let data = demo().join("heldout.jsonl");
    let out = agentworld(&[
        "eval",
        "infer",
        "--endpoint",
        &format!("{}/v1", server.url),
        "--data",
        data.to_str().unwrap(),
        "--out",
        pred.to_str().unwrap(),
        "--limit",
        "3",
        "--max-tokens",
        "40",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = std::fs::read_to_string(&pred).unwrap();
    assert_eq!(rows.lines().count(), 3, "{rows}");
}

#[test]
fn curl_talks_to_agentworld_serve() {
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("SKIP curl_talks_to_agentworld_serve: curl is not installed");
        return;
    }
    let server = Serve::start(&["--served-model-name", "demo"]);
    let curl = |args: &[&str]| {
        let out = Command::new("curl")
            .args(["-sS", "--max-time", "120"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let models: serde_json::Value =
        serde_json::from_str(&curl(&[&format!("{}/v1/models", server.url)])).unwrap();
    assert_eq!(models["data"][0]["id"], "demo");
    let chat = format!("{}/v1/chat/completions", server.url);
    let body =
        r#"{"model": "demo", "messages": [{"role": "user", "content": "ls"}], "max_tokens": 12}"#;
    let v: serde_json::Value = serde_json::from_str(&curl(&[
        "-H",
        "Content-Type: application/json",
        "-d",
        body,
        &chat,
    ]))
    .unwrap();
    assert_eq!(v["object"], "chat.completion", "{v}");
    let stream = body.replace("\"max_tokens\"", "\"stream\": true, \"max_tokens\"");
    let sse = curl(&["-N", "-d", &stream, &chat]);
    assert!(sse.trim_end().ends_with("data: [DONE]"), "{sse}");
    assert!(sse.contains("chat.completion.chunk"), "{sse}");
    let err: serde_json::Value = serde_json::from_str(&curl(&["-d", "{not json", &chat])).unwrap();
    assert_eq!(err["error"]["type"], "invalid_request_error");
    let health = curl(&["-i", &format!("{}/health", server.url)]);
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let metrics = curl(&[&format!("{}/metrics", server.url)]);
    assert!(metrics.contains("agentworld_requests_total{"), "{metrics}");
}

/// The Python interpreter that has the `openai` package: the CI venv, else `python3`.
fn python_with_openai() -> Option<PathBuf> {
    let venv = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/agentworld-openai-venv/bin/python"));
    let candidates = venv.into_iter().chain([PathBuf::from("python3")]);
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import openai"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Replies with reasoning and an XML tool call, cut mid-tag across tokens, when the prompt
/// lists tools; otherwise with a short thought and answer.
fn scripted_server(runtime: &tokio::runtime::Runtime) -> String {
    let dir = demo();
    let text = ModelText {
        tokenizer: Tokenizer::from_file(dir.join("tokenizer.json")).unwrap(),
        template: ChatTemplate::from_dir(&dir).unwrap(),
        generation_config: GenerationConfig::default(),
        context: 2048,
        card: Default::default(),
    };
    let tokenizer = text.tokenizer.clone();
    let script: Script = Arc::new(move |ids: &[u32]| {
        let prompt = tokenizer.decode(ids, false).unwrap_or_default();
        let pieces: &[&str] = if prompt.contains("<tools>") {
            &[
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
            ]
        } else {
            &["A thought.", "</think>\n\n", "An answer."]
        };
        pieces.iter().map(|s| s.to_string()).collect()
    });
    let config = ServeConfig {
        model_name: "scripted".into(),
        ..ServeConfig::default()
    };
    let engine = EngineHandle::spawn_batch(
        text,
        ScriptedBatch::new(script, Duration::from_millis(1)),
        &config,
    )
    .unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(agentworld_serve::serve(
            listener,
            engine,
            std::future::pending(),
        ));
        url
    })
}

#[test]
fn the_official_openai_python_client_works() {
    let Some(python) = python_with_openai() else {
        eprintln!(
            "SKIP the_official_openai_python_client_works: no python3 with the `openai` \
             package (.ci/run installs it into ~/.cache/agentworld-openai-venv)"
        );
        return;
    };
    let server = Serve::start(&[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scripted = scripted_server(&runtime);
    let out = Command::new(&python)
        .arg(repo().join("tests/openai_client/test_openai_client.py"))
        .env("AGENTWORLD_BASE_URL", &server.url)
        .env("AGENTWORLD_SCRIPTED_URL", &scripted)
        .output()
        .unwrap();
    let log = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{log}");
    assert!(log.contains("OK") && !log.contains("skipped"), "{log}");
    eprintln!("{log}");
}
