//! `agentworld eval infer | judge | score` against a fake OpenAI-compatible server on loopback,
//! with figures computed by hand (the fakes and rows are in `eval_fakes`).

mod common;
mod eval_fakes;
use common::{repo, text};
use eval_fakes::*;

use std::path::Path;
use std::process::Output;

use agentworld_world::Domain;
use agentworld_world::bench::{RUBRIC, builtin_judge_prompt};
use serde_json::{Value, json};

#[test]
fn infer_judge_score_reproduce_hand_computed_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, pred, judged) = (
        tmp.path().join("rows.jsonl"),
        tmp.path().join("out/pred.jsonl"),
        tmp.path().join("judged.jsonl"),
    );
    write_rows(&data);
    let server = Server::start(Box::new(|body: &Value, attempt| {
        match body["model"].as_str() {
            Some("world") => world_answer(body, attempt),
            _ => judge_answer(body, attempt),
        }
    }));
    let p = |path: &Path| path.to_str().unwrap().to_string();
    let infer = |extra: &[&str]| {
        let mut a: Vec<&str> = vec![
            "eval",
            "infer",
            "--endpoint",
            &server.url,
            "--model-name",
            "world",
            "--concurrency",
            "3",
            "--retry-delay",
            "0.01",
        ];
        a.extend_from_slice(extra);
        agentworld(&a)
    };

    // Infer, first run: W1 gets a 400 (not retried) and the run says so.
    let out = infer(&["--data", &p(&data), "--out", &p(&pred)]);
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("1 rows failed") && stderr.contains("HTTP 400"),
        "{stderr}"
    );
    // T2 was retried after its 503: 7 rows + 1 retry.
    assert_eq!(server.count("world"), 8);
    let rows = read_jsonl(&pred);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["T1", "T2", "T3", "A1", "A2", "A3", "W1"],
        "input order"
    );
    assert_eq!(rows[0]["prediction"], "OBS T1");
    assert_eq!(
        rows[0]["generation"],
        "<think>x</think>\n<predicted_observation>\nOBS T1\n</predicted_observation>"
    );
    assert_eq!(
        (
            rows[1]["prediction"].as_str(),
            rows[1]["reasoning"].as_str()
        ),
        (Some("OBS T2"), Some("thinking"))
    );
    assert_eq!(rows[2]["generation"], "");
    assert!(
        rows[6]["infer_error"]
            .as_str()
            .unwrap()
            .contains("HTTP 400")
    );

    // The request is the benchmark's infer step: system, earlier turns, current turn.
    let bodies = server.bodies("world");
    let a1 = bodies
        .iter()
        .find(|b| last_content(b).contains("act A1"))
        .unwrap();
    assert_eq!(
        (a1["temperature"].as_f64(), a1["max_tokens"].as_u64()),
        (Some(0.6), Some(32768))
    );
    let roles: Vec<&str> = a1["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(a1["messages"][0]["content"], "SYS x/android");
    assert_eq!(
        a1["messages"][2]["content"],
        "**Environment Observation:**\nGT A0"
    );

    // Infer, second run, the model name read from /v1/models and the URL given with /v1:
    // only W1 is asked again.
    let base = format!("{}/v1/", server.url);
    let out = agentworld(&[
        "eval",
        "infer",
        "--endpoint",
        &base,
        "--data",
        &p(&data),
        "--out",
        &p(&pred),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(server.count("world"), 9);
    let rows = read_jsonl(&pred);
    assert_eq!(
        (rows[6]["prediction"].as_str(), rows[6].get("infer_error")),
        (Some("OBS W1"), None)
    );

    // Judge, with the official judge prompt for terminal only.
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir_all(prompts.join("terminal")).unwrap();
    std::fs::write(
        prompts.join("terminal/system_prompt.txt"),
        "OFFICIAL SYSTEM",
    )
    .unwrap();
    std::fs::write(
        prompts.join("terminal/judge_system_prompt.txt"),
        "OFFICIAL JUDGE",
    )
    .unwrap();
    let judge = || {
        agentworld(&[
            "eval",
            "judge",
            "--data",
            &p(&pred),
            "--out",
            &p(&judged),
            "--endpoint",
            &format!("{}/v1", server.url),
            "--model-name",
            "judge",
            "--concurrency",
            "2",
            "--retry-delay",
            "0.01",
            "--prompts-dir",
            &p(&prompts),
        ])
    };
    let out = judge();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // T1 T2 A1 A2: one call each; A3: three; W1: three; T3: none (no generation).
    assert_eq!(server.count("judge"), 10);
    let judge_bodies = server.bodies("judge");
    let t1 = judge_bodies
        .iter()
        .find(|b| last_content(b).contains("OBS T1"))
        .unwrap();
    assert_eq!(t1["messages"][0]["content"], "OFFICIAL JUDGE");
    assert_eq!(t1["temperature"].as_f64(), Some(0.6));
    let expected_t1 = format!(
        "# Current Turn:\n\n### Turn 1\n**Action:**\n```json\n\"act T1\"\n```\n\n**World Model Output (Simulated):**\n```\nOBS T1\n```\n\n**Ground Truth (Real Output):**\n```\nGT T1\n```\n\n{}",
        RUBRIC.trim()
    );
    assert_eq!(last_content(t1), expected_t1);
    let a1 = judge_bodies
        .iter()
        .find(|b| last_content(b).contains("OBS A1"))
        .unwrap();
    assert_eq!(
        a1["messages"][0]["content"],
        builtin_judge_prompt(Domain::Android)
    );
    assert!(last_content(a1).starts_with(
        "# Context (Historical Interactions):\n\n### Turn 1\n**Action:**\n```json\n\"act A0\"\n```\n**Environment Observation:**\nGT A0\n\n\n\n# Current Turn:\n\n### Turn 1\n**Action:**\n```json\n\"act A1\"\n```\n\n"
    ));
    let rows = read_jsonl(&judged);
    let by_id = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap().clone();
    let dims = |id: &str| -> Vec<u64> {
        ["format", "factuality", "consistency", "realism", "quality"]
            .iter()
            .map(|d| by_id(id)[d].as_u64().unwrap())
            .collect()
    };
    assert_eq!(dims("T1"), [5, 4, 4, 3, 4]);
    assert_eq!(dims("T2"), [3, 2, 3, 2, 5]);
    assert_eq!(dims("A1"), [4, 4, 5, 4, 5]);
    assert_eq!(dims("A2"), [2, 1, 0, 0, 3]);
    assert_eq!(dims("A3"), [5, 5, 5, 5, 5]);
    for (id, total) in [
        ("T1", 4.0),
        ("T2", 3.0),
        ("A1", 4.4),
        ("A2", 2.0),
        ("A3", 5.0),
    ] {
        assert!(close(&by_id(id)["total_score"], total), "{id}");
    }
    assert_eq!(
        (
            by_id("T3")["failed"].as_f64(),
            by_id("T3")["error_message"].as_str()
        ),
        (Some(1.0), Some("No model generation"))
    );
    assert_eq!(by_id("W1")["failed"].as_f64(), Some(1.0));
    assert_eq!(by_id("A1")["extracted_output"], "OBS A1");

    // The judge prints the table; both overall figures (see below).
    assert!(
        stdout.contains("66.25") && stdout.contains("67.00"),
        "{stdout}"
    );

    // Judge again: only W1 (a failed judgement of a real generation) is tried again.
    let out = judge();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(server.count("judge"), 13);

    // Score.
    let out = agentworld(&["eval", "score", "--data", &p(&judged), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let domain = |name: &str| {
        report["domains"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["domain"] == name)
            .unwrap()
            .clone()
    };
    let t = domain("terminal");
    // terminal, valid T1 T2 (T3 failed): format (5+3)/2 = 4 → (4-1)/4*100 = 75;
    // factuality (4+2)/2 = 3 → 50; consistency (4+3)/2 = 3.5 → 62.5; realism (3+2)/2 = 2.5 → 37.5;
    // quality (4+5)/2 = 4.5 → 87.5; score (4.0+3.0)/2 = 3.5 → 62.5.
    for (got, want) in t["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .zip([75.0, 50.0, 62.5, 37.5, 87.5])
    {
        assert!(close(got, want), "terminal {got} vs {want}");
    }
    assert!(close(&t["total"], 62.5));
    assert_eq!(
        (t["samples"].as_u64(), t["valid"].as_u64()),
        (Some(3), Some(2))
    );
    let a = domain("android");
    // android A1 A2 A3: format (4+2+5)/3 = 11/3 → 200/3; factuality (4+1+5)/3 = 10/3 → 175/3;
    // consistency (5+5)/2 = 5 → 100 (A2 has none); realism (4+5)/2 = 4.5 → 87.5;
    // quality (5+3+5)/3 = 13/3 → 250/3; score (4.4+2.0+5.0)/3 = 3.8 → 70.
    for (got, want) in a["dimensions"].as_array().unwrap().iter().zip([
        200.0 / 3.0,
        175.0 / 3.0,
        100.0,
        87.5,
        250.0 / 3.0,
    ]) {
        assert!(close(got, want), "android {got} vs {want}");
    }
    assert!(close(&a["total"], 70.0));
    // web: W1 failed, no score.
    assert!(domain("web")["total"].is_null());
    // README overall: (62.5 + 70) / 2 = 66.25.
    assert!(close(&report["overall_domain_mean"], 66.25));
    // eval.py overall: totals 4, 3, 4.4, 2, 5 → 18.4/5 = 3.68 → (3.68-1)/4*100 = 67.
    assert!(close(&report["overall_sample_weighted"], 67.0));
    assert_eq!(
        (
            report["samples"].as_u64(),
            report["scored"].as_u64(),
            report["unscored"].as_u64()
        ),
        (Some(7), Some(5), Some(2))
    );

    let out = agentworld(&["eval", "score", "--data", &p(&judged)]);
    let table = text(&out.stdout);
    assert!(
        table.contains("| terminal | 3 | 2 | 75.00 | 50.00 | 62.50 | 37.50 | 87.50 | 62.50 |"),
        "{table}"
    );
    assert!(
        table.contains("| web | 1 | 0 | – | – | – | – | – | – |"),
        "{table}"
    );
    assert!(
        table.contains("as the README table): 66.25") && table.contains("as eval.py): 67.00"),
        "{table}"
    );
}

#[test]
fn bad_input_is_named_by_line_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("rows.jsonl");
    let good = row("terminal", "T1", &[("act T1", "GT T1")]);
    std::fs::write(&data, format!("{good}\n{{\"task\": \"terminal\", broken\n")).unwrap();
    let d = data.to_str().unwrap();
    let out_path = tmp.path().join("o.jsonl");
    let o = out_path.to_str().unwrap();
    let check = |out: Output, needle: &str| {
        let stderr = text(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(needle) && !stderr.contains("panicked"),
            "{needle}: {stderr}"
        );
    };
    check(
        agentworld(&[
            "eval",
            "infer",
            "--data",
            d,
            "--out",
            o,
            "--endpoint",
            "http://127.0.0.1:9",
        ]),
        "rows.jsonl:2",
    );
    // A turn index past the prompts: named before any call.
    let mut bad = good.clone();
    bad["turn_idx"] = json!(5);
    std::fs::write(&data, format!("{good}\n{bad}\n")).unwrap();
    check(
        agentworld(&[
            "eval",
            "judge",
            "--data",
            d,
            "--out",
            o,
            "--endpoint",
            "http://127.0.0.1:9",
            "--model-name",
            "j",
        ]),
        "rows.jsonl:2",
    );
    // The same sample twice.
    std::fs::write(&data, format!("{good}\n\n{good}\n")).unwrap();
    check(
        agentworld(&[
            "eval",
            "infer",
            "--data",
            d,
            "--out",
            o,
            "--endpoint",
            "http://127.0.0.1:9",
        ]),
        "rows.jsonl:3 are the same sample",
    );
    // Neither an endpoint nor a model.
    std::fs::write(&data, format!("{good}\n")).unwrap();
    check(
        agentworld(&["eval", "infer", "--data", d, "--out", o]),
        "pass --endpoint URL",
    );
    // A judged file with a score that is not a number.
    std::fs::write(&data, "{\"task\": \"web\", \"failed\": 1}\n\n{\"task\": \"os\", \"failed\": 0, \"format\": \"high\"}\n").unwrap();
    check(agentworld(&["eval", "score", "--data", d]), "line 3");
}

#[test]
fn infer_with_a_local_model() {
    let model = repo().join("public/models/agentworld-demo");
    let heldout = model.join("heldout.jsonl");
    if !model.join("config.json").is_file() || !heldout.is_file() {
        eprintln!(
            "skipped: no demo model at {} (build it with `agentworld train demo`)",
            model.display()
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (data, out) = (tmp.path().join("rows.jsonl"), tmp.path().join("pred.jsonl"));
    let first: Vec<String> = std::fs::read_to_string(&heldout)
        .unwrap()
        .lines()
        .take(3)
        .map(str::to_string)
        .collect();
    std::fs::write(&data, first.join("\n") + "\n").unwrap();
    let (d, o, m) = (
        data.to_str().unwrap(),
        out.to_str().unwrap(),
        model.to_str().unwrap(),
    );
    let run = || {
        agentworld(&[
            "eval",
            "infer",
            "--data",
            d,
            "--out",
            o,
            "--model",
            m,
            "--batch",
            "2",
            "--max-tokens",
            "48",
            "--temperature",
            "0",
        ])
    };
    let result = run();
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), first.len());
    for r in &rows {
        assert!(!r["generation"].as_str().unwrap().is_empty(), "{r}");
        assert!(
            r["prediction"].is_string() && r.get("infer_error").is_none(),
            "{r}"
        );
    }
    // Everything is done: a second run generates nothing and leaves the file as it was.
    let before = std::fs::read_to_string(&out).unwrap();
    let again = run();
    assert!(
        text(&again.stderr).contains("0 to run"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
}
