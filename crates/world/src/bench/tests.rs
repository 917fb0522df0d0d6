//! End to end on hand-made rows: judge answers covering every parsing path go through
//! retries, are stored in rows, written as JSONL, read back and aggregated; every figure is
//! computed by hand in the comments.

use super::*;
use crate::row::{parse_jsonl, write_jsonl};
use crate::{Domain, Row};

/// A judged-to-be row: its domain, id, and what the judge answers on each attempt
/// (`Err` = the call failed). `None`: the row has no generation.
struct Case {
    domain: Domain,
    id: &'static str,
    answers: Option<Vec<std::result::Result<&'static str, &'static str>>>,
}

fn case(
    domain: Domain,
    id: &'static str,
    answers: Option<Vec<std::result::Result<&'static str, &'static str>>>,
) -> Case {
    Case {
        domain,
        id,
        answers,
    }
}

fn cases() -> Vec<Case> {
    use Domain::*;
    vec![
        // T1: the call fails once, then a tagged markdown block: [5,4,4,3,4], total 20/5 = 4.0.
        case(
            Terminal,
            "T1",
            Some(vec![
                Err("HTTP 503"),
                Ok(
                    "Reasoning about each dimension...\n<final_evaluation>\n```json\n{\"strengths\": [\"right files\"], \"weaknesses\": [], \"scores\": {\"format\": 5, \"factuality\": 4, \"consistency\": 4, \"realism\": 3, \"quality\": 4}}\n```\n</final_evaluation>",
                ),
            ]),
        ),
        // T2: an orphan </think> drops the draft before it; no tag, no fence: forward brace
        // matching. "3/5" → 3, 2.5 → 2 (half to even), 7 → 5: [3,2,3,2,5], total 15/5 = 3.0.
        case(
            Terminal,
            "T2",
            Some(vec![Ok(
                "Draft: {\"scores\": {\"format\": 1}} no.</think>\nFinal: {\"strengths\": \"fast\", \"scores\": {\"format\": 3, \"factuality\": 2, \"consistency\": \"3/5\", \"realism\": 2.5, \"quality\": 7}} done.",
            )]),
        ),
        // T3: every call fails: failed, excluded.
        case(
            Terminal,
            "T3",
            Some(vec![Err("timeout"), Err("timeout"), Err("timeout")]),
        ),
        // T4: a decoy verdict inside <think>, then a tag holding bare JSON: [1,1,1,1,1], total 1.0.
        case(
            Terminal,
            "T4",
            Some(vec![Ok(
                "<think>maybe <final_evaluation>{\"scores\": {\"format\": 5, \"factuality\": 5, \"consistency\": 5, \"realism\": 5, \"quality\": 5}}</final_evaluation></think>\n<final_evaluation>{\"scores\": {\"format\": 1, \"factuality\": 1, \"consistency\": 1, \"realism\": 1, \"quality\": 1}}</final_evaluation>",
            )]),
        ),
        // A1: single quotes, bare keys, trailing commas: repaired. [4,4,5,4,5], total 22/5 = 4.4.
        case(
            Android,
            "A1",
            Some(vec![Ok(
                "<final_evaluation>{'strengths': ['kept the tree',], 'scores': {format: 4, factuality: 4, consistency: 5, realism: 4, quality: 5,},}</final_evaluation>",
            )]),
        ),
        // A2: the last fenced block with "scores" wins; consistency and realism are missing:
        // [2,1,0,0,3], total (2+1+3)/3 = 2.0.
        case(
            Android,
            "A2",
            Some(vec![Ok(
                "```json\n{\"scores\": {\"format\": 5, \"factuality\": 5, \"consistency\": 5, \"realism\": 5, \"quality\": 5}}\n```\nRevised:\n```json\n{\"scores\": {\"format\": 2, \"factuality\": 1, \"quality\": 3}}\n```\n```\n{\"note\": \"n\"}\n```",
            )]),
        ),
        // W1: three unparseable answers: failed, excluded.
        case(
            Web,
            "W1",
            Some(vec![Ok("Looks fine."), Ok("4/5"), Ok("{\"score\": 4}")]),
        ),
        // W2: escaped JSON: forward matching finds nothing, backward matching from the last
        // brace does, repair unescapes it: [4,3,4,4,5], total 20/5 = 4.0.
        case(
            Web,
            "W2",
            Some(vec![Ok(
                "Here: {\\\"scores\\\": {\\\"format\\\": 4, \\\"factuality\\\": 3, \\\"consistency\\\": 4, \\\"realism\\\": 4, \\\"quality\\\": 5}}",
            )]),
        ),
        // W3: an unescaped quote breaks the object; only the "scores" object is read:
        // [3,3,2,3,3], total 14/5 = 2.8.
        case(
            Web,
            "W3",
            Some(vec![Ok(
                "<final_evaluation>\n```json\n{\"strengths\": [\"says \"ok\" twice\"], \"scores\": {\"format\": 3, \"factuality\": 3, \"consistency\": 2, \"realism\": 3, \"quality\": 3}}\n```\n</final_evaluation>",
            )]),
        ),
        // O1: no generation: failed without a call.
        case(Os, "O1", None),
        // S1: a verdict with no scores at all: valid, but total 0 keeps it out of every mean.
        case(
            Search,
            "S1",
            Some(vec![Ok(
                "<final_evaluation>```json\n{\"scores\": {}}\n```</final_evaluation>",
            )]),
        ),
    ]
}

fn judged_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for c in cases() {
        let mut row = Row::from_turns(
            c.domain,
            c.id,
            "SYS",
            vec![("P1".into(), "**Environment Observation:**\nR1".into())],
        );
        let outcome = match &c.answers {
            None => JudgeOutcome::no_generation(),
            Some(answers) => {
                set_inference(
                    &mut row,
                    &Inference {
                        generation: "<predicted_observation>x</predicted_observation>".into(),
                        prediction: "x".into(),
                        ..Default::default()
                    },
                );
                let mut calls = 0;
                let outcome = JudgeOutcome::with_retries(3, |attempt| {
                    calls += 1;
                    answers[attempt].map(str::to_string).map_err(str::to_string)
                });
                // Stops at the first parsed answer, else uses all three attempts.
                let expected = if outcome.is_failed() {
                    3
                } else {
                    answers.len()
                };
                assert_eq!(calls, expected, "{}", c.id);
                outcome
            }
        };
        outcome.write_into(&mut row, Some("x"));
        rows.push(row);
    }
    rows
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn every_parsing_path_gives_the_hand_computed_scores() {
    let rows = judged_rows();
    let by_id = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
    let dims = |id: &str| -> Vec<u64> {
        Dimension::ALL
            .iter()
            .map(|d| by_id(id).extra[d.as_str()].as_u64().unwrap())
            .collect()
    };
    assert_eq!(dims("T1"), [5, 4, 4, 3, 4]);
    assert_eq!(dims("T2"), [3, 2, 3, 2, 5]);
    assert_eq!(dims("T4"), [1, 1, 1, 1, 1]);
    assert_eq!(dims("A1"), [4, 4, 5, 4, 5]);
    assert_eq!(dims("A2"), [2, 1, 0, 0, 3]);
    assert_eq!(dims("W2"), [4, 3, 4, 4, 5]);
    assert_eq!(dims("W3"), [3, 3, 2, 3, 3]);
    assert_eq!(dims("S1"), [0, 0, 0, 0, 0]);
    for (id, total) in [
        ("T1", 4.0),
        ("T2", 3.0),
        ("T4", 1.0),
        ("A1", 4.4),
        ("A2", 2.0),
        ("W2", 4.0),
        ("W3", 2.8),
        ("S1", 0.0),
    ] {
        assert!(
            close(by_id(id).extra["total_score"].as_f64().unwrap(), total),
            "{id}"
        );
        assert_eq!(by_id(id).extra["failed"], 0.0, "{id}");
    }
    for id in ["T3", "W1", "O1"] {
        assert_eq!(by_id(id).extra["failed"], 1.0, "{id}");
        assert!(!by_id(id).extra.contains_key("format"), "{id}");
    }
    assert_eq!(by_id("O1").extra["error_message"], NO_GENERATION);
    assert!(
        by_id("T3").extra["error_message"]
            .as_str()
            .unwrap()
            .contains("judge call failed: timeout")
    );
    assert_eq!(by_id("W1").extra["judge_raw_output"], "{\"score\": 4}");
    assert_eq!(
        by_id("A1").extra["strengths"],
        serde_json::json!(["kept the tree"])
    );
    // The scores-only fallback loses the strengths, as in the benchmark.
    assert_eq!(by_id("W3").extra["strengths"], serde_json::json!([]));
}

#[test]
fn both_overall_figures_from_judged_jsonl() {
    let mut jsonl = Vec::new();
    write_jsonl(&judged_rows(), &mut jsonl).unwrap();
    let text = String::from_utf8(jsonl).unwrap();
    // The rows survive the round trip, judgement fields included.
    assert_eq!(parse_jsonl(&text).unwrap(), judged_rows());
    let report = aggregate(&parse_judged_jsonl(&text).unwrap());
    let names: Vec<&str> = report.domains.iter().map(|d| d.domain.as_str()).collect();
    assert_eq!(names, ["android", "os", "search", "terminal", "web"]);
    let d = |name: &str| report.domains.iter().find(|d| d.domain == name).unwrap();
    let expect = |name: &str, dims: [Option<f64>; 5], total: Option<f64>| {
        let got = d(name);
        for (i, (g, e)) in got.dimensions.iter().zip(dims).enumerate() {
            match (g, e) {
                (Some(g), Some(e)) => assert!(close(*g, e), "{name} dim {i}: {g} vs {e}"),
                (g, e) => assert_eq!(*g, e, "{name} dim {i}"),
            }
        }
        match (got.total, total) {
            (Some(g), Some(e)) => assert!(close(g, e), "{name} total {g} vs {e}"),
            (g, e) => assert_eq!(g, e, "{name} total"),
        }
    };
    // terminal, valid T1 T2 T4 (T3 failed):
    //   format (5+3+1)/3 = 3 → (3-1)/4*100 = 50; factuality (4+2+1)/3 = 7/3 → 100/3;
    //   consistency (4+3+1)/3 = 8/3 → 125/3; realism (3+2+1)/3 = 2 → 25;
    //   quality (4+5+1)/3 = 10/3 → 175/3; total (4+3+1)/3 = 8/3 → 125/3 ≈ 41.67.
    expect(
        "terminal",
        [
            Some(50.0),
            Some(100.0 / 3.0),
            Some(125.0 / 3.0),
            Some(25.0),
            Some(175.0 / 3.0),
        ],
        Some(125.0 / 3.0),
    );
    assert_eq!(
        (
            d("terminal").samples,
            d("terminal").valid,
            d("terminal").failed,
            d("terminal").scored
        ),
        (4, 3, 1, 3)
    );
    // android, A1 A2; A2's missing dimensions (0) are left out of their means:
    //   format (4+2)/2 = 3 → 50; factuality (4+1)/2 = 2.5 → 37.5; consistency 5 → 100;
    //   realism 4 → 75; quality (5+3)/2 = 4 → 75; total (4.4+2.0)/2 = 3.2 → 55.
    expect(
        "android",
        [Some(50.0), Some(37.5), Some(100.0), Some(75.0), Some(75.0)],
        Some(55.0),
    );
    // web, W2 W3 (W1 failed): format (4+3)/2 = 3.5 → 62.5; factuality 3 → 50;
    //   consistency (4+2)/2 = 3 → 50; realism 3.5 → 62.5; quality (5+3)/2 = 4 → 75;
    //   total (4.0+2.8)/2 = 3.4 → 60.
    expect(
        "web",
        [Some(62.5), Some(50.0), Some(50.0), Some(62.5), Some(75.0)],
        Some(60.0),
    );
    // os: its only row failed; search: its only row has no scores. Neither has a score.
    expect("os", [None; 5], None);
    expect("search", [None; 5], None);
    assert_eq!((d("search").valid, d("search").scored), (1, 0));
    // README "Overall": mean of the three domain scores = (125/3 + 55 + 60) / 3 = 470/9 ≈ 52.22.
    assert!(close(report.overall_domain_mean.unwrap(), 470.0 / 9.0));
    // eval.py "Overall": the 7 scored totals 4, 3, 1, 4.4, 2, 4, 2.8 sum to 21.2;
    //   mean 21.2/7; (21.2/7 - 1)/4*100 = (14.2/7)/4*100 = 1420/28 ≈ 50.71.
    assert!(close(
        report.overall_sample_weighted.unwrap(),
        1420.0 / 28.0
    ));
    assert_eq!((report.samples, report.scored, report.unscored), (11, 7, 4));
}

#[test]
fn judge_request_for_a_hand_made_row() {
    let row = &judged_rows()[0];
    let m = judge_messages(
        row,
        prediction(row).unwrap(),
        builtin_judge_prompt(Domain::Terminal),
    )
    .unwrap();
    assert!(
        m[0].content
            .starts_with("You are an exacting evaluator of a Terminal World Model")
    );
    assert!(m[1].content.starts_with(
        "# Current Turn:\n\nP1\n\n**World Model Output (Simulated):**\n```\nx\n```\n\n**Ground Truth (Real Output):**\n```\nR1\n```\n\n"
    ));
    assert_eq!(infer_messages(row).unwrap().len(), 2);
}
