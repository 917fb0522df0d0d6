//! `agentworld rollout` as users run it: the real binary, 32+ environments at once, against
//! the demo model and against OpenAI-compatible servers on loopback (a fake policy and a fake
//! world model that count what they are asked, fail first attempts and stall).

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentworld_world::Row;
use agentworld_world::row::parse_jsonl;
use common::{Serve, agentworld, text};
use serde_json::{Value, json};

/// What a fake server answers: HTTP status and JSON body, after an optional delay.
type Handler = Arc<dyn Fn(&Value) -> (u16, Value, Duration) + Send + Sync>;

/// An OpenAI-compatible server on a free loopback port, one thread per connection.
fn fake_server(handler: Handler) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = handler.clone();
            std::thread::spawn(move || answer(stream, &*handler));
        }
    });
    url
}

fn answer(mut stream: TcpStream, handler: &(dyn Fn(&Value) -> (u16, Value, Duration) + Sync)) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (status, reply) = if request_line.starts_with("GET /v1/models") {
        (
            200,
            json!({"object": "list", "data": [{"id": "fake", "object": "model"}]}),
        )
    } else {
        let request: Value = serde_json::from_slice(&body).unwrap();
        let (status, reply, delay) = handler(&request);
        std::thread::sleep(delay);
        (status, reply)
    };
    let b = reply.to_string();
    // The client may have given up (timeout); a failed write is fine.
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
        b.len()
    );
}

fn chat_reply(content: &str) -> Value {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop"}]})
}

/// The text of the last message of a chat request.
fn last_message(request: &Value) -> String {
    let m = request["messages"].as_array().unwrap();
    m.last().unwrap()["content"].as_str().unwrap().to_string()
}

/// A policy that echoes its task id twice, then finishes (`[]`).
fn policy_server() -> String {
    fake_server(Arc::new(|request: &Value| {
        let m = request["messages"].as_array().unwrap();
        let goal = m[1]["content"].as_str().unwrap();
        let id = goal.split_whitespace().nth(1).unwrap_or("?").to_string();
        let turn = (m.len() - 2) / 2 + 1;
        let action = if turn <= 2 {
            format!("[{{\"keystrokes\": \"echo {id}-{turn}\\n\", \"duration\": 0.1}}]")
        } else {
            "[]".to_string()
        };
        let content = format!("<think>next</think>\n```json\n{action}\n```");
        (200, chat_reply(&content), Duration::from_millis(5))
    }))
}

/// The `echo KEY` of a world request's turn prompt.
fn echoed(request: &Value) -> String {
    let prompt = last_message(request);
    let start = prompt.find("echo ").map(|i| i + 5).unwrap_or(0);
    prompt[start..].split('\\').next().unwrap().to_string()
}

/// `n` terminal tasks; with `scripted`, the even ones replay two actions (the odd ones ask
/// the policy).
fn tasks_file(dir: &std::path::Path, n: usize, scripted: bool) -> std::path::PathBuf {
    let mut lines = String::new();
    for i in 0..n {
        let mut task = json!({"id": format!("env{i}"), "domain": "terminal",
                              "instruction": format!("env{i} says hello"),
                              "state": "user@sandbox:~$ "});
        if scripted && i % 2 == 0 {
            task["actions"] = json!([[{"keystrokes": format!("echo env{i}-1\n"), "duration": 0.1}],
                                     [{"keystrokes": "ls\n", "duration": 0.1}]]);
        }
        lines.push_str(&format!("{task}\n"));
    }
    let path = dir.join("tasks.jsonl");
    std::fs::write(&path, lines).unwrap();
    path
}

fn read_rows(path: &std::path::Path) -> Vec<Row> {
    parse_jsonl(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every task has exactly one row, and every row `world_steps` observed steps.
fn check_rows(rows: &[Row], n: usize, world_steps: usize) {
    assert_eq!(rows.len(), n);
    let ids: HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), n, "one row per task");
    for r in rows {
        assert_eq!(r.task, "terminal");
        assert_eq!(
            (r.prompt.len(), r.response.len()),
            (world_steps, world_steps),
            "{}",
            r.id
        );
        assert_eq!((r.turn_idx, r.total_turns), (world_steps, world_steps));
        assert!(
            r.response
                .iter()
                .all(|o| o.starts_with("**Environment Observation:**\n"))
        );
        assert!(r.prompt[0].contains("**Current State:**\nuser@sandbox:~$ "));
        r.messages().unwrap();
        let steps = r.extra["steps"].as_array().unwrap();
        let observed: Vec<&Value> = steps
            .iter()
            .filter(|s| !s["generation"].is_null())
            .collect();
        assert_eq!(observed.len(), world_steps, "{}: {steps:?}", r.id);
        for s in observed {
            assert!(!s["generation"].as_str().unwrap().is_empty());
            assert!(s["error"].is_null(), "{s}");
        }
    }
}

/// The `N` of "peak decode batch N" in a rollout's log.
fn peak_batch(log: &str) -> usize {
    let at = log
        .find("peak decode batch ")
        .expect("a local rollout reports its batch")
        + "peak decode batch ".len();
    log[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn thirty_two_envs_against_the_demo_model_lose_no_step() {
    let policy = policy_server();
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path(), 32, true);
    let out = dir.path().join("trajectories.jsonl");
    let started = Instant::now();
    let run = agentworld(&[
        "rollout",
        "--policy-endpoint",
        &policy,
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--concurrency",
        "32",
        "--max-tokens",
        "48",
    ]);
    let log = text(&run.stderr);
    assert!(run.status.success(), "{log}");
    assert!(log.contains("32 decoded together"), "{log}");
    // Many envs' steps decoded in one batch, not one env at a time. All 32 usually join; the
    // bound leaves room for envs whose policy answered late on a loaded machine.
    assert!(peak_batch(&log) >= 16, "{log}");
    let rows = read_rows(&out);
    check_rows(&rows, 32, 2);
    for r in &rows {
        let scripted = r.id.trim_start_matches("env").parse::<usize>().unwrap() % 2 == 0;
        let steps = r.extra["steps"].as_array().unwrap();
        if scripted {
            assert_eq!(r.extra["done_reason"], "script_ended", "{}", r.id);
            assert_eq!(steps.len(), 2);
            assert!(r.prompt[1].starts_with("### Turn 2\n") && r.prompt[1].contains("ls\\n"));
            assert_eq!(steps[0]["calls"]["policy_attempts"], 0);
        } else {
            assert_eq!(r.extra["done_reason"], "finished", "{}", r.id);
            assert_eq!(steps.len(), 3, "two echoes, then []");
            assert!(
                r.prompt[1].contains(&format!("echo {}-2", r.id)),
                "{}",
                r.prompt[1]
            );
            assert_eq!(steps[0]["calls"]["policy_attempts"], 1);
        }
        for s in steps {
            assert!(s["calls"]["world_attempts"].as_u64() <= Some(1), "{s}");
        }
    }
    eprintln!(
        "demo model, 32 envs x 2 steps: {:.1}s wall (binary, model load included)\n{log}",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn thirty_two_envs_against_agentworld_serve_on_loopback() {
    let server = Serve::start_with(32, &[]);
    let policy = policy_server();
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path(), 32, true);
    let out = dir.path().join("trajectories.jsonl");
    let started = Instant::now();
    let run = agentworld(&[
        "rollout",
        "--policy-endpoint",
        &policy,
        "--world-endpoint",
        &server.url,
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--concurrency",
        "32",
        "--max-tokens",
        "48",
        "--temperature",
        "0",
    ]);
    let log = text(&run.stderr);
    assert!(run.status.success(), "{log}");
    let rows = read_rows(&out);
    check_rows(&rows, 32, 2);
    // The server splits the thinking off (`reasoning_content`); it is put back in front.
    let generations: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.extra["steps"].as_array().unwrap())
        .filter_map(|s| s["generation"].as_str())
        .collect();
    assert!(
        generations.iter().any(|g| g.contains("\n</think>\n\n")),
        "{generations:?}"
    );
    eprintln!(
        "agentworld serve (demo model), 32 envs x 2 steps: {:.1}s\n{log}",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn forty_envs_against_loopback_endpoints_with_retries() {
    let policy = policy_server();
    // The world model fails every step's first attempt (503), then holds the first requests
    // until 32 are in flight at once: the rollout only finishes if it runs 32 envs together.
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let reached = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let (s, f, r, c) = (
        seen.clone(),
        in_flight.clone(),
        reached.clone(),
        calls.clone(),
    );
    let world = fake_server(Arc::new(move |request: &Value| {
        c.fetch_add(1, Ordering::SeqCst);
        let key = echoed(request);
        if s.lock().unwrap().insert(key.clone()) {
            return (
                503,
                json!({"error": {"message": "warming up"}}),
                Duration::ZERO,
            );
        }
        let now = f.fetch_add(1, Ordering::SeqCst) + 1;
        if now >= 32 {
            r.store(true, Ordering::SeqCst);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while !r.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        f.fetch_sub(1, Ordering::SeqCst);
        let screen = format!("user@sandbox:~$ echo {key}\n{key}\nuser@sandbox:~$ ");
        let content = format!("<predicted_observation>\n{screen}\n</predicted_observation>");
        (200, chat_reply(&content), Duration::ZERO)
    }));
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path(), 40, false);
    let out = dir.path().join("trajectories.jsonl");
    let started = Instant::now();
    let run = agentworld(&[
        "rollout",
        "--policy-endpoint",
        &policy,
        "--world-endpoint",
        &world,
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--concurrency",
        "32",
        "--retry-delay",
        "0.01",
        "--timeout",
        "30",
    ]);
    let log = text(&run.stderr);
    assert!(run.status.success(), "{log}");
    assert!(
        reached.load(Ordering::SeqCst),
        "never 32 world requests in flight at once"
    );
    let rows = read_rows(&out);
    check_rows(&rows, 40, 2);
    for r in &rows {
        let steps = r.extra["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 3, "two echoes, then []");
        assert_eq!(r.extra["done_reason"], "finished");
        for (t, s) in steps[..2].iter().enumerate() {
            let key = format!("{}-{}", r.id, t + 1);
            assert_eq!(s["calls"]["world_attempts"], 2, "{s}");
            assert_eq!(s["calls"]["policy_attempts"], 1);
            assert!(
                s["observation"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("\n{key}\n")),
                "{s}"
            );
            assert_eq!(s["well_formed"], true);
        }
        assert_eq!(steps[2]["action"], "[]");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        40 * 2 * 2,
        "each step: a 503, then an answer"
    );
    eprintln!(
        "loopback, 40 envs x 2 steps, 32 at once: {:.2}s\n{log}",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn a_stalled_world_model_times_out_and_is_retried() {
    let policy = policy_server();
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let world = fake_server(Arc::new(move |request: &Value| {
        let key = echoed(request);
        let first = seen.lock().unwrap().insert(key.clone());
        let content = format!("<predicted_observation>\n{key}\n</predicted_observation>");
        let delay = if first {
            Duration::from_secs(5)
        } else {
            Duration::ZERO
        };
        (200, chat_reply(&content), delay)
    }));
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path(), 4, false);
    let out = dir.path().join("t.jsonl");
    let started = Instant::now();
    let run = agentworld(&[
        "rollout",
        "--policy-endpoint",
        &policy,
        "--world-endpoint",
        &world,
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--concurrency",
        "4",
        "--timeout",
        "0.5",
        "--retry-delay",
        "0.01",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let rows = read_rows(&out);
    check_rows(&rows, 4, 2);
    for r in &rows {
        for s in &r.extra["steps"].as_array().unwrap()[..2] {
            assert_eq!(s["calls"]["world_attempts"], 2, "{s}");
            assert!(s["calls"]["world_secs"].as_f64().unwrap() >= 0.5);
        }
    }
    // Two stalled 5 s attempts per env would take 10 s; timeouts cut each to 0.5 s.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_world_model_that_is_down_is_reported_in_every_trajectory() {
    let policy = policy_server();
    // A port nothing listens on.
    let down = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path(), 3, false);
    let out = dir.path().join("t.jsonl");
    let run = agentworld(&[
        "rollout",
        "--policy-endpoint",
        &policy,
        "--world-endpoint",
        &down,
        "--world-model-name",
        "m",
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--attempts",
        "2",
        "--retry-delay",
        "0.01",
    ]);
    let log = text(&run.stderr);
    assert!(!run.status.success());
    assert!(
        log.contains("3 trajectories ended on a call that failed"),
        "{log}"
    );
    let rows = read_rows(&out);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r.extra["done_reason"], "failed");
        let step = &r.extra["steps"][0];
        assert_eq!(step["calls"]["world_attempts"], 2);
        assert!(
            step["error"].as_str().unwrap().contains("world model:"),
            "{step}"
        );
        // The failed turn is the row's last prompt, ready for `eval infer`.
        assert_eq!((r.prompt.len(), r.response.len(), r.turn_idx), (1, 0, 1));
    }
}

#[test]
fn a_local_step_past_its_timeout_is_cancelled_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    // A long state and no token limit: each step takes well over 0.1 s on any machine.
    let state = "user@sandbox:~$ ls\nlog.txt  notes.txt\n".repeat(20);
    let line = json!({"id": "slow", "domain": "terminal", "state": state,
                      "actions": [[{"keystrokes": "ls\n", "duration": 0.5}]]});
    std::fs::write(&tasks, format!("{line}\n")).unwrap();
    let out = dir.path().join("t.jsonl");
    let run = agentworld(&[
        "rollout",
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--max-tokens",
        "2048",
        "--timeout",
        "0.1",
        "--attempts",
        "2",
        "--retry-delay",
        "0",
    ]);
    let log = text(&run.stderr);
    assert!(!run.status.success(), "{log}");
    let rows = read_rows(&out);
    let step = &rows[0].extra["steps"][0];
    assert_eq!(step["calls"]["world_attempts"], 2, "{step}");
    assert!(
        step["error"].as_str().unwrap().contains("no answer within"),
        "{step}"
    );
    assert_eq!(rows[0].extra["done_reason"], "failed");
}

#[test]
fn bad_tasks_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\": 1, \"domain\": \"terminal\", \"actions\": [\"[]\"]}\n{\"id\": 2, \"domain\": \"mars\"}\n",
    )
    .unwrap();
    let out = dir.path().join("t.jsonl");
    let run = agentworld(&[
        "rollout",
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let log = text(&run.stderr);
    assert!(!run.status.success());
    assert!(
        log.contains("line 2") && log.contains("tasks.jsonl") && log.contains("mars"),
        "{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    std::fs::write(&tasks, "{\"id\": 1, \"domain\": \"terminal\"}\n").unwrap();
    let run = agentworld(&[
        "rollout",
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let log = text(&run.stderr);
    assert!(
        !run.status.success() && log.contains("--policy-endpoint"),
        "{log}"
    );
}
