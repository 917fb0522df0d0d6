//! The `agentworld` command as a user runs it: real binary, demo model, example states.

mod common;
use common::{agentworld, text};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

/// The whole simulate path on a real UI dump: conversion to the card's `android-compact`, the
/// card's prompt, generation, extraction and parsing back into a tree. An overwhelming copy
/// prior makes the prediction the current state copied, so the tree checked here does not hang
/// on what the model has learnt: at the card's own 15 nats the shipped model loses this
/// screen's copy on line 33 (docs/demo-model.md), and `--json` then reports the parse
/// error, checked below.
#[test]
fn simulate_android_with_the_demo_model_returns_a_parsed_tree() {
    let run = |bias: &str| {
        let out = agentworld(&[
            "simulate",
            "--domain",
            "android",
            "--state",
            "examples/android/settings.xml",
            "--action",
            "examples/android/type_search.json",
            "--copy-bias",
            bias,
            "--json",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("tok/s"), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
        assert_eq!(v["domain"], "android");
        assert!(v["well_formed"].is_boolean(), "{v}");
        v
    };
    let copied = run("100");
    let nodes = &copied["state"]["tree"]["nodes"];
    assert!(
        nodes.as_array().map_or(0, Vec::len) > 20,
        "the settings screen as a tree: {copied}"
    );
    assert!(copied.to_string().contains("Wi-Fi"), "{copied}");
    let card = run("15");
    let state = &card["state"];
    assert!(
        state["tree"]["nodes"].is_array()
            || state["error"].as_str().is_some_and(|e| e.contains("line")),
        "a tree, or a parse error naming the line: {card}"
    );
}

#[test]
fn simulate_terminal_streams_a_screen_ending_in_a_prompt() {
    let out = agentworld(&[
        "simulate",
        "--domain",
        "terminal",
        "--state",
        "examples/terminal/screen1.txt",
        "--action",
        r#"[{"keystrokes": "ls\n", "duration": 0.5}]"#,
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("thinking: "), "{stderr}");
    let screen = text(&out.stdout);
    assert!(
        screen.contains("user@sandbox:"),
        "a terminal screen: {screen:?}"
    );
}

#[test]
fn inspect_reports_layout_and_parameters() {
    let out = agentworld(&["inspect"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("Gated DeltaNet")
            && s.contains("experts, top-2")
            && s.contains("active per token"),
        "{s}"
    );
    let out = agentworld(&[
        "inspect",
        "--json",
        "--model",
        "crates/model/tests/fixtures/parity/composite",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["layout"]["prefix"], "model.language_model.");
    assert_eq!(v["layout"]["shards"].as_array().unwrap().len(), 3);
    let skipped = v["layout"]["skipped"].to_string();
    assert!(
        skipped.contains("mtp") && skipped.contains("visual"),
        "{skipped}"
    );
}

#[test]
fn bad_input_gets_a_clear_error_not_a_panic() {
    let out = agentworld(&["simulate", "--domain", "fridge", "--action", "[]"]);
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(e.contains("fridge") && e.contains("terminal"), "{e}");
    assert!(!e.contains("panicked"), "{e}");

    let out = agentworld(&[
        "simulate",
        "--domain",
        "terminal",
        "--action",
        "[]",
        "--model",
        "/nonexistent/model",
    ]);
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(
        e.contains("/nonexistent/model") && e.contains("--endpoint"),
        "{e}"
    );

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("broken.xml");
    std::fs::write(
        &state,
        "<hierarchy><node class=\"a\" bounds=\"[0,0][1,1]\"><node",
    )
    .unwrap();
    let out = agentworld(&[
        "simulate",
        "--domain",
        "android",
        "--action",
        "{\"action\":\"back\"}",
        "--state",
        state.to_str().unwrap(),
    ]);
    let e = text(&out.stderr);
    assert!(!e.contains("panicked"), "{e}");
    assert!(!out.status.success());
    assert!(
        e.contains("broken.xml") && e.contains("does not parse") && e.contains("agentworld parse"),
        "{e}"
    );

    // Arguments refused before any model loads, each error saying what was wrong.
    let empty_model = dir.path().join("empty-model");
    std::fs::create_dir(&empty_model).unwrap();
    for (extra, says) in [
        (vec!["--temperature", "-1"], "between 0 (greedy) and 2"),
        (vec!["--top-p", "0"], "above 0 and at most 1"),
        (vec!["--max-tokens", "0"], "1 or more"),
        (vec!["--copy-bias", "-5"], "0 (off) or more"),
        (
            vec!["--model", empty_model.to_str().unwrap()],
            "not a model directory (no config.json)",
        ),
    ] {
        let mut args = vec!["simulate", "--domain", "web", "--action", "click('1')"];
        args.extend(extra);
        let out = agentworld(&args);
        let e = text(&out.stderr);
        assert!(!out.status.success() && e.contains(says), "{args:?}: {e}");
    }
    // An action file that is not there is not sent to the model as the action's text.
    for (action, says) in [
        ("examples/android/no_such_action.json", "no such file"),
        ("  ", "--action is empty"),
    ] {
        let out = agentworld(&["simulate", "--domain", "android", "--action", action]);
        let e = text(&out.stderr);
        assert!(!out.status.success() && e.contains(says), "{action:?}: {e}");
    }
}

/// `eval fidelity` refuses rows it cannot score instead of printing an empty or made-up table.
#[test]
fn eval_fidelity_refuses_no_rows_and_unknown_domains() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = agentworld(&["eval", "fidelity", "--data", empty.to_str().unwrap()]);
    let e = text(&out.stderr);
    assert!(
        !out.status.success() && e.contains("no rows to evaluate"),
        "{e}"
    );

    let heldout =
        std::fs::read_to_string(common::repo().join("public/models/agentworld-demo/heldout.jsonl"))
            .unwrap();
    let mut row: serde_json::Value = serde_json::from_str(heldout.lines().next().unwrap()).unwrap();
    row["task"] = "fridge".into();
    let bogus = dir.path().join("bogus.jsonl");
    std::fs::write(&bogus, format!("{row}\n")).unwrap();
    let out = agentworld(&["eval", "fidelity", "--data", bogus.to_str().unwrap()]);
    let e = text(&out.stderr);
    assert!(
        !out.status.success() && e.contains("unknown domain `fridge`") && e.contains("row 1"),
        "{e}"
    );
}

#[test]
fn train_refuses_settings_that_would_train_nothing_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("model");
    let out = out_dir.to_str().unwrap();
    for (args, says) in [
        (vec!["--steps", "0"], "--steps must be at least 1"),
        (
            vec!["--steps", "10", "--stop-after-steps", "10"],
            "is not between 1 and the run's 10 steps",
        ),
        (
            vec!["--tokens-per-batch", "0"],
            "--tokens-per-batch must be",
        ),
        (
            vec!["--init-from", "/nonexistent/checkpoints"],
            "no checkpoint there",
        ),
        // Default features: no GPU backend compiled in.
        (
            vec!["--backend", "cuda"],
            "rebuild with `cargo build --release --features cuda`",
        ),
    ] {
        let mut all = vec!["train", "demo", "--out", out];
        all.extend(&args);
        let o = agentworld(&all);
        assert!(!o.status.success(), "{args:?}");
        let e = text(&o.stderr);
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
        assert!(
            !dir.path().join("model.work").exists(),
            "{args:?} made files"
        );
    }
}

#[test]
fn simulate_notes_an_action_that_does_not_parse_and_goes_on() {
    let out = agentworld(&[
        "simulate",
        "--domain",
        "web",
        "--action",
        "clik('12')",
        "--model",
        "/nonexistent/model",
    ]);
    let e = text(&out.stderr);
    assert!(
        e.contains("note: action: unknown action 'clik' (did you mean click?)"),
        "{e}"
    );
    // The note does not stop the command: it fails later, for the missing model.
    assert!(e.contains("/nonexistent/model"), "{e}");
}

#[test]
fn data_terminal_writes_agentworldbench_rows() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("rows.jsonl");
    let out = agentworld(&[
        "data",
        "terminal",
        "--n",
        "12",
        "--seed",
        "3",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 12);
    for r in &rows {
        for field in [
            "task",
            "id",
            "prompt",
            "response",
            "current_prompt",
            "system_str",
            "turn_idx",
            "total_turns",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["task"], "terminal");
    }
}

#[test]
fn data_cuts_training_rows_from_made_up_states_on_request() {
    let dumps =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases/android");
    if !dumps.is_dir() {
        eprintln!("skipped: ../shared/cases is not there");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("rows.jsonl");
    let args = |share: &'static str| {
        vec![
            "data",
            "android",
            "--n",
            "20",
            "--synthetic-share",
            share,
            "--dumps",
            dumps.to_str().unwrap(),
            "--out",
            out_file.to_str().unwrap(),
        ]
    };
    let o = agentworld(&args("1.5"));
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("not a share between 0 and 1"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out_file.exists(), "nothing written");
    let mut terminal = args("1");
    terminal[1] = "terminal";
    let o = agentworld(&terminal);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("terminal rows are real bash"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out_file.exists(), "nothing written");
    // Web sites and OS desktops are made up the same way (their default sources).
    for domain in ["web", "os"] {
        let mut other = args("1");
        other[1] = domain;
        other.drain(6..8); // --dumps DIR
        let o = agentworld(&other);
        assert!(o.status.success(), "{domain}: {}", text(&o.stderr));
        let rows = std::fs::read_to_string(&out_file).unwrap();
        for line in rows.lines() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            let synthetic = r["source"] == "synthetic";
            assert_eq!(synthetic, r["split"] == "train", "{domain} {}", r["id"]);
        }
        std::fs::remove_file(&out_file).unwrap();
    }

    let o = agentworld(&args("1"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 20);
    for r in &rows {
        let synthetic = r["source"] == "synthetic";
        assert_eq!(synthetic, r["split"] == "train", "{}", r["id"]);
    }

    // Renaming, as the recipe does it: training rows only.
    let mut renamed = args("0");
    renamed.extend(["--rename-share", "1"]);
    let o = agentworld(&renamed);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("content words renamed in"),
        "{}",
        text(&o.stderr)
    );
}

/// Reads one HTTP/1.1 request from `stream`: its request line and its body.
fn read_request(stream: &std::net::TcpStream) -> (String, Vec<u8>) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (request_line, body)
}

/// A fake OpenAI-compatible server on loopback that streams reasoning then content, the way
/// vLLM with `--reasoning-parser qwen3` does.
fn fake_server() -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut seen_body = String::new();
        for _ in 0..2 {
            let (mut stream, _) = listener.accept().unwrap();
            let (request_line, body) = read_request(&stream);
            if request_line.starts_with("GET /v1/models") {
                let b = r#"{"object":"list","data":[{"id":"Qwen-AgentWorld-35B-A3B","object":"model"}]}"#;
                write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len()).unwrap();
            } else {
                seen_body = String::from_utf8(body).unwrap();
                let chunks = [
                    r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The agent lists"}}]}"#,
                    r#"{"choices":[{"index":0,"delta":{"reasoning_content":" files."}}]}"#,
                    r#"{"choices":[{"index":0,"delta":{"content":"<predicted_observation>\nuser@sandbox:~$ ls\na.txt\n"}}]}"#,
                    r#"{"choices":[{"index":0,"delta":{"content":"user@sandbox:~$ \n</predicted_observation>"}}]}"#,
                    r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":21,"total_tokens":31}}"#,
                ];
                let mut sse = String::new();
                for c in chunks {
                    sse.push_str(&format!("data: {c}\n\n"));
                }
                sse.push_str("data: [DONE]\n\n");
                write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}", sse.len()).unwrap();
            }
        }
        seen_body
    });
    (url, handle)
}

#[test]
fn simulate_against_an_openai_compatible_endpoint() {
    let (url, server) = fake_server();
    let out = agentworld(&[
        "simulate",
        "--endpoint",
        &url,
        "--domain",
        "terminal",
        "--state",
        "examples/terminal/screen1.txt",
        "--action",
        r#"[{"keystrokes": "ls\n", "duration": 0.5}]"#,
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["observation"],
        "user@sandbox:~$ ls\na.txt\nuser@sandbox:~$"
    );
    assert_eq!(v["tokens"], 21);
    assert!(
        text(&out.stderr).contains("The agent lists files."),
        "{}",
        text(&out.stderr)
    );
    let body: serde_json::Value = serde_json::from_str(&server.join().unwrap()).unwrap();
    assert_eq!(body["model"], "Qwen-AgentWorld-35B-A3B");
    assert_eq!(body["stream"], true);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("Terminal World Model")
    );
    let user = messages[1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("### Turn 1\n**Action:**\n```json\n")
            && user.contains("**Current State:**\nuser@sandbox:~$ ls"),
        "{user}"
    );
}

/// A server's refusal comes back with what the server said, not only its status.
#[test]
fn simulate_shows_what_an_endpoint_said_when_it_refuses() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        read_request(&stream);
        let b =
            r#"{"error":{"message":"The model `foo` does not exist","type":"not_found_error"}}"#;
        write!(stream, "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len()).unwrap();
    });
    let out = agentworld(&[
        "simulate",
        "--endpoint",
        &url,
        "--model-name",
        "foo",
        "--domain",
        "web",
        "--action",
        "click('1')",
    ]);
    server.join().unwrap();
    let e = text(&out.stderr);
    assert!(
        !out.status.success() && e.contains("HTTP 404: The model `foo` does not exist"),
        "{e}"
    );
}

/// With stdout and stderr joined into one stream (`2>&1` into a file or a pipe), the banner,
/// the reasoning, the header, the predicted state and the closing rule come out in that
/// order: stdout is flushed before anything more goes to stderr.
#[test]
fn the_header_and_the_state_come_out_in_order_on_one_stream() {
    let (mut reader, writer) = std::io::pipe().expect("a pipe");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agentworld"))
        .args([
            "simulate",
            "--domain",
            "web",
            "--state",
            "examples/web/newsletter_axtree.txt",
            "--action",
            "fill('13', 'Grace Hopper')",
        ])
        .current_dir(common::repo())
        .stdout(writer.try_clone().expect("a second end"))
        .stderr(writer)
        .spawn()
        .expect("the binary runs");
    let mut joined = String::new();
    reader
        .read_to_string(&mut joined)
        .expect("the joined output");
    assert!(child.wait().expect("it ends").success(), "{joined}");
    let at = |needle: &str| {
        joined
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing from:\n{joined}"))
    };
    let order = [
        at("prompt: "),
        at("thinking: "),
        at("── predicted observation ──"),
        at("RootWebArea 'Harbor Lights - Newsletter'"),
        at("\t[20] button 'Subscribe'"),
        at("── end ──"),
        at("tok/s"),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "out of order:\n{joined}"
    );
}
