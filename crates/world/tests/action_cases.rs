//! Every action found in the real material under `../shared/cases` parses, and target checks
//! agree with the real states. Domains with no real actions there (os, terminal) are covered
//! by the unit tests only; their counts are printed as 0.

use std::path::PathBuf;

use agentworld_world::Domain;
use agentworld_world::action::{Action, AndroidAction, AndroidForm, check_targets, parse_action};
use agentworld_world::state::Registry;

fn cases_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is missing", dir.display());
        None
    }
}

/// The text between each pair of triple backticks in `s`.
fn fenced(s: &str) -> Vec<String> {
    s.split("```")
        .skip(1)
        .step_by(2)
        .map(|x| x.trim().to_string())
        .collect()
}

#[test]
fn web_actions_in_visualwebarena_prompt_parse() {
    let Some(dir) = cases_dir() else { return };
    let text = std::fs::read_to_string(dir.join("web/01_visualwebarena_som_prompt_examples.json"))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // The action list in the intro, and the action each worked example ends with.
    let mut actions: Vec<String> = fenced(v["intro"].as_str().unwrap())
        .into_iter()
        .filter(|a| !a.is_empty())
        .collect();
    for ex in v["examples"].as_array().unwrap() {
        let answer = ex[1].as_str().unwrap();
        actions.extend(fenced(answer).into_iter().last());
    }
    assert!(actions.len() >= 16, "{actions:?}");
    for a in &actions {
        if let Err(e) = parse_action(Domain::Web, a) {
            panic!("{a:?}: {e}");
        }
    }
    assert!(actions.iter().any(|a| a == "type [5] [guitar] [1]"));
    println!("web: {} real actions parsed", actions.len());
}

#[test]
fn visualwebarena_example_actions_name_elements_of_their_observation() {
    let Some(dir) = cases_dir() else { return };
    let text = std::fs::read_to_string(dir.join("web/01_visualwebarena_som_prompt_examples.json"))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut targeted = 0;
    for ex in v["examples"].as_array().unwrap() {
        let state = Registry::standard()
            .parse("auto", ex[0].as_str().unwrap())
            .unwrap()
            .tree;
        let act = fenced(ex[1].as_str().unwrap()).pop().unwrap();
        let action = parse_action(Domain::Web, &act).unwrap();
        if let Action::Web(w) = &action {
            targeted += usize::from(!w.bids().is_empty());
        }
        assert_eq!(
            check_targets(&action, &state),
            Vec::<String>::new(),
            "{act}"
        );
        // The same action on an id the page lacks is warned about.
        if act.starts_with("click [") {
            let missing = parse_action(Domain::Web, "click [99999]").unwrap();
            assert_eq!(check_targets(&missing, &state).len(), 1);
        }
    }
    assert_eq!(targeted, 2);
}

#[test]
fn droidbot_event_parses_and_hits_the_touched_view() {
    let Some(dir) = cases_dir() else { return };
    let traj = dir.join("trajectories/droidbot_acrylic");
    let mut n = 0;
    for entry in std::fs::read_dir(&traj).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("event_") {
            continue;
        }
        let action = parse_action(Domain::Android, &std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            matches!(
                action,
                Action::Android(AndroidForm::Ui(AndroidAction::Tap { .. }))
            ),
            "{action:?}"
        );
        let before = Registry::standard()
            .parse(
                "droidbot",
                &std::fs::read_to_string(traj.join("state_2023-10-19_024840.json")).unwrap(),
            )
            .unwrap()
            .tree;
        assert_eq!(check_targets(&action, &before), Vec::<String>::new());
        n += 1;
    }
    assert_eq!(n, 1);
    println!("android: {n} real actions parsed");
}

#[test]
fn tool_calls_in_qwen_examples_parse() {
    let Some(dir) = cases_dir() else { return };
    let text = std::fs::read_to_string(dir.join("qwen/example_strings.md")).unwrap();
    let mut calls: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("{\"name\""))
        .collect();
    // The inline example with string arguments.
    calls.extend(
        text.split('`')
            .filter(|s| s.starts_with("{\"name\"") && s.contains("\\\"element_id\\\"")),
    );
    assert!(calls.len() >= 4, "{calls:?}");
    for c in &calls {
        for d in [Domain::Mcp, Domain::Search, Domain::Swe] {
            parse_action(d, c).unwrap_or_else(|e| panic!("{c}: {e}"));
        }
    }
    // The deliberately broken variants stay errors.
    assert!(
        parse_action(
            Domain::Mcp,
            r#"{"name":"a","arguments":{}}{"name":"a","arguments":{}}"#
        )
        .is_err()
    );
    assert!(parse_action(Domain::Mcp, "<tool_call>\n{\"name\": \"scroll\", \"argu").is_err());
    println!(
        "tool: {} real calls parsed; os: 0, terminal: 0 (no real actions in cases)",
        calls.len()
    );
}
