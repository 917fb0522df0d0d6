//! Generator tests for the longer commands, the new errors and 2–4-turn rows (real bash).

use super::*;
use agentworld_world::messages::strip_observation_marker;

fn rows(n: usize, seed: u64) -> Vec<Row> {
    generate_terminal(&TerminalDataConfig {
        n,
        seed,
        ..Default::default()
    })
    .unwrap()
}

fn ids(row: &Row) -> Vec<String> {
    row.extra["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The template id of the last turn and that turn's observation.
fn last(row: &Row) -> (String, String) {
    (
        ids(row).last().unwrap().clone(),
        strip_observation_marker(row.response.last().unwrap()),
    )
}

#[test]
fn new_kinds_show_real_bash_output() {
    let rows = rows(400, 21);
    let mut seen: std::collections::BTreeMap<String, Vec<&Row>> = Default::default();
    let mut turns = [0usize; 5];
    for row in &rows {
        assert!((1..=4).contains(&row.turn_idx), "{}", row.id);
        assert!(row_tokens(row) <= 1500, "{}", row.id);
        turns[row.turn_idx] += 1;
        for id in ids(row) {
            seen.entry(id).or_default();
        }
        let (id, obs) = last(row);
        let want = match id.as_str() {
            "run_noexec" => Some(": Permission denied"),
            "run_missing" => Some(": No such file or directory"),
            "cd_file" => Some(": Not a directory"),
            "missing_and" | "missing_or" => Some(": No such file or directory"),
            "mkdir_nested" => Some("mkdir: cannot create directory"),
            "not_found" => Some(": command not found"),
            _ => None,
        };
        if let Some(want) = want {
            let tail: Vec<&str> = obs.lines().rev().take(4).collect();
            assert!(
                tail.iter().any(|l| l.contains(want)),
                "{}: {want:?} in\n{obs}",
                row.id
            );
        }
        if id == "missing_and" {
            assert!(!obs.lines().rev().take(2).any(|l| l == "done"), "{obs}");
        }
        seen.entry(id).or_default().push(row);
    }
    println!("rows by turns (0..=4): {turns:?}");
    assert!(turns[2] > 0 && turns[3] > 0 && turns[4] > 0, "{turns:?}");
    for id in [
        "sort_head",
        "ls_wc",
        "mkdir_cd_touch",
        "echo_cat",
        "missing_and",
        "for_wc",
        "for_echo",
        "run_noexec",
        "bash_script",
        "chmod_run",
        "run_missing",
        "cd_file",
        "mkdir_nested",
        "rmdir_full",
        "for_head",
        "missing_or",
        "cat_missing",
        "not_found",
    ] {
        let found = seen.get(id).map_or(0, Vec::len);
        assert!(seen.contains_key(id), "{id} never used");
        for row in seen[id].iter().take(2) {
            let (_, obs) = last(row);
            let action = row.prompt.last().unwrap().lines().nth(3).unwrap_or("");
            println!(
                "=== {id} ({found} final) {}: {action}\n{obs}\n--- {}",
                row.id,
                row.thinking.as_deref().unwrap()
            );
        }
    }
}

#[test]
fn held_out_templates_never_in_training_and_turns_capped() {
    let rows = generate_terminal(&TerminalDataConfig {
        n: 60,
        seed: 4,
        max_turns: 2,
        ..Default::default()
    })
    .unwrap();
    for row in &rows {
        assert!(row.turn_idx <= 2, "{}", row.id);
        let ids = ids(row);
        let held = |id: &String| DEFAULT_HELD_OUT.contains(&id.as_str());
        match row.split {
            Some(Split::Train) => assert!(!ids.iter().any(held), "{}: {ids:?}", row.id),
            _ => {
                assert!(held(ids.last().unwrap()), "{}: {ids:?}", row.id);
                assert!(!ids[..ids.len() - 1].iter().any(held));
            }
        }
    }
    let again = generate_terminal(&TerminalDataConfig {
        n: 60,
        seed: 4,
        max_turns: 2,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(rows, again, "deterministic for a seed");
}
