//! Fakes for the `agentworld eval` tests: the CLI runner, a fake OpenAI-compatible server on
//! loopback that plays both world model and judge, and the hand-made rows with their answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::repo;

pub fn agentworld(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentworld"))
        .args(args)
        .current_dir(repo())
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("the agentworld binary runs")
}

/// Answers a request body, given how many identical bodies came before: (status, content,
/// reasoning_content).
pub type Answer = dyn Fn(&Value, usize) -> (u16, String, Option<String>) + Send + Sync;

/// A loopback server answering chat completions; it records every request body.
pub struct Server {
    pub url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Server {
    pub fn start(answer: Box<Answer>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
        let answer: Arc<Answer> = answer.into();
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (seen, answer) = (seen.clone(), answer.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut length = 0;
                    let mut request_line = String::new();
                    reader.read_line(&mut request_line).unwrap();
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
                    reader.read_exact(&mut body).unwrap();
                    if request_line.starts_with("GET /v1/models ") {
                        let b = r#"{"object":"list","data":[{"id":"world","object":"model"}]}"#;
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
                            b.len()
                        );
                        return;
                    }
                    let body: Value = serde_json::from_slice(&body).unwrap();
                    let attempt = {
                        let mut seen = seen.lock().unwrap();
                        let n = seen.iter().filter(|b| **b == body).count();
                        seen.push(body.clone());
                        n
                    };
                    let (status, content, reasoning) = answer(&body, attempt);
                    let reply = if status == 200 {
                        json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0,
                            "message": {"role": "assistant", "content": content, "reasoning_content": reasoning},
                            "finish_reason": "stop"}]})
                        .to_string()
                    } else {
                        json!({"error": {"message": content}}).to_string()
                    };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                        reply.len()
                    );
                });
            }
        });
        Server { url, requests }
    }

    pub fn count(&self, model: &str) -> usize {
        let r = self.requests.lock().unwrap();
        r.iter().filter(|b| b["model"] == model).count()
    }

    pub fn bodies(&self, model: &str) -> Vec<Value> {
        let r = self.requests.lock().unwrap();
        r.iter().filter(|b| b["model"] == model).cloned().collect()
    }
}

pub fn last_content(body: &Value) -> String {
    let m = body["messages"].as_array().unwrap();
    m.last().unwrap()["content"].as_str().unwrap().to_string()
}

/// The sample ids, each with its world-model output and its judge's answers per attempt.
pub fn world_answer(body: &Value, attempt: usize) -> (u16, String, Option<String>) {
    let user = last_content(body);
    let obs = |id: &str| {
        format!("<think>x</think>\n<predicted_observation>\nOBS {id}\n</predicted_observation>")
    };
    let id = ["T1", "T2", "T3", "A1", "A2", "A3", "W1"]
        .into_iter()
        .find(|id| user.contains(&format!("act {id}")))
        .expect("a known row");
    match (id, attempt) {
        // A retryable failure, then the answer (one run).
        ("T2", 0) => (503, "busy".into(), None),
        ("T2", _) => (
            200,
            "<predicted_observation>OBS T2</predicted_observation>".into(),
            Some("thinking".into()),
        ),
        // The model answers nothing: judged as failed, without a call.
        ("T3", _) => (200, String::new(), None),
        // Not retryable: the first run fails for this row, the second gets it.
        ("W1", 0) => (400, "bad request".into(), None),
        (id, _) => (200, obs(id), None),
    }
}

pub fn judge_answer(body: &Value, attempt: usize) -> (u16, String, Option<String>) {
    let user = last_content(body);
    let id = ["T1", "T2", "A1", "A2", "A3", "W1"]
        .into_iter()
        .find(|id| user.contains(&format!("```\nOBS {id}\n```")))
        .expect("a known prediction");
    let ok = |s: &str| (200, s.to_string(), None);
    match (id, attempt) {
        // [5,4,4,3,4]: total 20/5 = 4.0
        ("T1", _) => ok(
            "Reasoning.\n<final_evaluation>\n```json\n{\"strengths\": [\"a\"], \"weaknesses\": [], \"scores\": {\"format\": 5, \"factuality\": 4, \"consistency\": 4, \"realism\": 3, \"quality\": 4}}\n```\n</final_evaluation>",
        ),
        // no tag, no fence; "3/5" → 3, 2.5 → 2, 7 → 5: [3,2,3,2,5], total 15/5 = 3.0
        ("T2", _) => ok(
            "<think>hm</think>Final: {\"scores\": {\"format\": 3, \"factuality\": 2, \"consistency\": \"3/5\", \"realism\": 2.5, \"quality\": 7}}",
        ),
        // repaired: [4,4,5,4,5], total 22/5 = 4.4
        ("A1", _) => ok(
            "<final_evaluation>{'scores': {format: 4, factuality: 4, consistency: 5, realism: 4, quality: 5,},}</final_evaluation>",
        ),
        // the last fenced block with scores; two dimensions missing: [2,1,0,0,3], total 6/3 = 2.0
        ("A2", _) => ok(
            "```json\n{\"scores\": {\"format\": 5}}\n```\n```json\n{\"scores\": {\"format\": 2, \"factuality\": 1, \"quality\": 3}}\n```",
        ),
        // a call error, an unparseable answer, then [5,5,5,5,5]: total 5.0
        ("A3", 0) => (500, "oops".into(), None),
        ("A3", 1) => ok("I would give it a 5."),
        ("A3", _) => ok(
            "<final_evaluation>```json\n{\"scores\": {\"format\": 5, \"factuality\": 5, \"consistency\": 5, \"realism\": 5, \"quality\": 5}}\n```</final_evaluation>",
        ),
        // never parseable: failed after three tries
        (_, _) => ok("no verdict"),
    }
}

pub fn row(task: &str, id: &str, turns: &[(&str, &str)]) -> Value {
    let prompt: Vec<String> = turns
        .iter()
        .map(|(p, _)| format!("### Turn 1\n**Action:**\n```json\n\"{p}\"\n```"))
        .collect();
    let response: Vec<String> = turns
        .iter()
        .map(|(_, r)| format!("**Environment Observation:**\n{r}"))
        .collect();
    json!({"task": task, "id": id, "prompt": prompt, "response": response,
           "current_prompt": prompt.last().unwrap(), "system_str": format!("SYS {task}"),
           "turn_idx": turns.len(), "total_turns": turns.len()})
}

pub fn write_rows(path: &Path) {
    let rows = [
        row("terminal", "T1", &[("act T1", "GT T1")]),
        row("terminal", "T2", &[("act T2", "GT T2")]),
        row("terminal", "T3", &[("act T3", "GT T3")]),
        row(
            "x/android",
            "A1",
            &[("act A0", "GT A0"), ("act A1", "GT A1")],
        ),
        row("android", "A2", &[("act A2", "GT A2")]),
        row("android", "A3", &[("act A3", "GT A3")]),
        row("web", "W1", &[("act W1", "GT W1")]),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap_or(f64::NAN) - b).abs() < 1e-9
}
