//! Android rows derived from the real dumps: every observation is recomputed from the row's own
//! text (compact state + action JSON) and must match.

#![cfg(feature = "native")]

use std::path::PathBuf;
use std::sync::OnceLock;

use agentworld_data::android::Dump;
use agentworld_data::android::moves::check_move;
use agentworld_data::{AndroidDataConfig, generate_android, row_tokens};
use agentworld_world::action::android::{AndroidAction, Outcome, apply};
use agentworld_world::messages::strip_observation_marker;
use agentworld_world::state::android::{parse_compact, render_compact};
use agentworld_world::{Domain, Row, Split, prompts};

fn dumps() -> Vec<Dump> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases/android");
    let dumps = Dump::load_dir(&dir)
        .unwrap_or_else(|e| panic!("{e} (tests read ../shared/cases beside the repo)"));
    assert_eq!(dumps.len(), 5);
    dumps
}

fn rows() -> &'static Vec<Row> {
    static CELL: OnceLock<Vec<Row>> = OnceLock::new();
    CELL.get_or_init(|| {
        generate_android(&AndroidDataConfig {
            n: 300,
            seed: 3,
            dumps: dumps(),
            ..Default::default()
        })
        .unwrap()
    })
}

fn fenced(prompt: &str) -> &str {
    prompt
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap()
}

#[test]
fn rows_have_the_benchmark_shape() {
    let rows = rows();
    assert_eq!(rows.len(), 300);
    assert_eq!(rows[7].id, "android-3-00007");
    for (k, row) in rows.iter().enumerate() {
        row.validate().unwrap();
        assert_eq!(row.domain().unwrap(), Domain::Android);
        assert!((1..=4).contains(&row.turn_idx));
        assert_eq!(row.system_str, prompts::builtin(Domain::Android));
        assert_eq!(
            row.split,
            Some(if (k + 1) % 10 == 0 {
                Split::Test
            } else {
                Split::Train
            })
        );
        assert!(
            row_tokens(row) <= 1500,
            "{} has ~{} tokens",
            row.id,
            row_tokens(row)
        );
        assert!(row.prompt[0].contains("\n\n**Current State:**\n"));
        assert!(
            row.prompt
                .iter()
                .skip(1)
                .all(|p| !p.contains("**Current State:**"))
        );
        assert!(
            fenced(&row.prompt[0]).starts_with("{\"action\": \""),
            "{}",
            row.prompt[0]
        );
    }
    let multi = rows.iter().filter(|r| r.turn_idx >= 2).count();
    assert!((30..150).contains(&multi), "{multi} multi-turn rows");
}

#[test]
fn every_observation_is_the_exact_effect_of_its_action() {
    let mut edits = 0;
    let mut unchanged = 0;
    let mut moves = 0;
    for row in rows() {
        let state_text = row.prompt[0].split("**Current State:**\n").nth(1).unwrap();
        let parsed = parse_compact(state_text).unwrap();
        assert!(parsed.warnings.is_empty());
        let mut tree = parsed.tree;
        assert_eq!(
            render_compact(&tree),
            state_text,
            "{}: the state renders back identically",
            row.id
        );
        for (p, r) in row.prompt.iter().zip(&row.response) {
            let action = AndroidAction::parse(fenced(p)).unwrap();
            let observation = strip_observation_marker(r);
            if matches!(action, AndroidAction::Scroll { .. } | AndroidAction::Back) {
                // generator-defined moves: checked against their own exact rules
                let after = parse_compact(&observation).unwrap().tree;
                check_move(&tree, &action, &after).unwrap_or_else(|e| panic!("{}: {e}", row.id));
                tree = after;
                moves += 1;
                continue;
            }
            let outcome = apply(&tree, &action);
            let after = outcome
                .tree_after(&tree)
                .unwrap_or_else(|| panic!("{}: not computable: {outcome:?}", row.id))
                .clone();
            assert_eq!(render_compact(&after), observation, "{}", row.id);
            match outcome {
                Outcome::Edited { .. } => edits += 1,
                _ => unchanged += 1,
            }
            tree = parse_compact(&observation).unwrap().tree;
        }
        let thinking = row.thinking.as_deref().unwrap();
        let target_changed = strip_observation_marker(row.response.last().unwrap())
            != row
                .response
                .len()
                .checked_sub(2)
                .map_or(state_text.to_string(), |i| {
                    strip_observation_marker(&row.response[i])
                });
        let says_change = ["Local edit:", "Scroll:", "Back:"]
            .iter()
            .any(|p| thinking.starts_with(p));
        assert_eq!(says_change, target_changed, "{}: {thinking}", row.id);
    }
    assert!(
        edits > 150 && unchanged > 60 && moves > 20,
        "{edits} edits, {unchanged} unchanged, {moves} scrolls and backs"
    );
}

#[test]
fn held_out_dump_only_in_test_rows() {
    for row in rows() {
        let source = row.extra["source"].as_str().unwrap();
        let held = source == "07_flutter_naf_newline_contentdesc.xml";
        assert_eq!(held, row.split == Some(Split::Test), "{}: {source}", row.id);
    }
    let sources: std::collections::BTreeSet<&str> = rows()
        .iter()
        .map(|r| r.extra["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources.len(), 5, "every dump is used: {sources:?}");
}

#[test]
fn actions_cover_the_schema() {
    let mut kinds = std::collections::BTreeSet::new();
    let mut targets = std::collections::BTreeSet::new();
    for row in rows() {
        let v: serde_json::Value =
            serde_json::from_str(fenced(row.prompt.last().unwrap())).unwrap();
        kinds.insert(v["action"].as_str().unwrap().to_string());
        targets.insert(match &v["target"] {
            serde_json::Value::Number(_) => "index",
            serde_json::Value::String(s) if s.starts_with('#') => "id",
            serde_json::Value::String(_) => "text",
            serde_json::Value::Object(_) => "point",
            _ => "none",
        });
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["back", "long_press", "scroll", "tap", "toggle", "type"]
    );
    assert_eq!(
        targets.into_iter().collect::<Vec<_>>(),
        ["id", "index", "none", "point", "text"]
    );
}

#[test]
fn deterministic_and_configurable() {
    let cfg = AndroidDataConfig {
        n: 20,
        seed: 8,
        dumps: dumps(),
        ..Default::default()
    };
    assert_eq!(
        generate_android(&cfg).unwrap(),
        generate_android(&cfg).unwrap()
    );
    let held = AndroidDataConfig {
        held_out: Some(vec!["01".into(), "02".into()]),
        ..cfg.clone()
    };
    for row in generate_android(&held).unwrap() {
        let source = row.extra["source"].as_str().unwrap();
        assert_eq!(
            source.starts_with("01") || source.starts_with("02"),
            row.split == Some(Split::Test)
        );
    }
}

#[test]
fn bad_configurations_are_errors() {
    let none = AndroidDataConfig {
        n: 1,
        ..Default::default()
    };
    assert!(
        generate_android(&none)
            .unwrap_err()
            .to_string()
            .contains("no Android dumps")
    );
    let one = AndroidDataConfig {
        n: 3,
        dumps: dumps()[..1].to_vec(),
        ..Default::default()
    };
    assert!(
        generate_android(&one)
            .unwrap_err()
            .to_string()
            .contains("held-out")
    );
    let rows = generate_android(&AndroidDataConfig {
        test_every: 0,
        ..one
    })
    .unwrap();
    assert_eq!(rows.len(), 3);
    let broken = AndroidDataConfig {
        n: 1,
        dumps: vec![Dump {
            name: "x.xml".into(),
            xml: "<hierarchy><node>".into(),
        }],
        test_every: 0,
        ..Default::default()
    };
    assert!(
        generate_android(&broken)
            .unwrap_err()
            .to_string()
            .contains("x.xml")
    );
}
