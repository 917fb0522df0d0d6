//! Terminal rows generated from real bash: shape, budget, splits, determinism, confinement.

#![cfg(feature = "native")]

use std::sync::OnceLock;

use agentworld_data::terminal::commands::DEFAULT_HELD_OUT;
use agentworld_data::{TerminalDataConfig, generate_terminal, row_tokens};
use agentworld_world::messages::OBSERVATION_MARKER;
use agentworld_world::state::terminal::TerminalScreen;
use agentworld_world::{Domain, Row, Split, prompts};

struct Generated {
    rows: Vec<Row>,
    parent: tempfile::TempDir,
    sentinel_before: (String, std::time::SystemTime),
}

/// One generation shared by the tests (it runs a few hundred real commands), with sandboxes
/// created next to a sentinel file.
fn generated() -> &'static Generated {
    static CELL: OnceLock<Generated> = OnceLock::new();
    CELL.get_or_init(|| {
        let parent = tempfile::tempdir().unwrap();
        let sentinel = parent.path().join("sentinel.txt");
        std::fs::write(&sentinel, "do not touch\n").unwrap();
        let meta = std::fs::metadata(&sentinel).unwrap();
        let cfg = TerminalDataConfig {
            n: 60,
            seed: 11,
            sandbox_parent: Some(parent.path().to_path_buf()),
            ..Default::default()
        };
        let rows = generate_terminal(&cfg).unwrap();
        Generated {
            rows,
            sentinel_before: ("do not touch\n".into(), meta.modified().unwrap()),
            parent,
        }
    })
}

fn commands(row: &Row) -> Vec<String> {
    row.extra["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The command typed in a turn prompt.
fn typed(prompt: &str) -> String {
    let json = prompt
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v[0]["keystrokes"]
        .as_str()
        .unwrap()
        .trim_end_matches('\n')
        .to_string()
}

#[test]
fn rows_have_the_benchmark_shape() {
    let g = generated();
    assert_eq!(g.rows.len(), 60);
    assert_eq!(g.rows[0].id, "terminal-11-00000");
    for (k, row) in g.rows.iter().enumerate() {
        row.validate().unwrap();
        assert_eq!(row.domain().unwrap(), Domain::Terminal);
        let n = row.turn_idx;
        assert!((1..=4).contains(&n), "{}", row.id);
        assert_eq!(
            (row.prompt.len(), row.response.len(), row.total_turns),
            (n, n, n)
        );
        assert_eq!(row.current_prompt, row.prompt[n - 1]);
        assert_eq!(row.system_str, prompts::builtin(Domain::Terminal));
        assert_eq!(row.messages().unwrap().len(), 2 * n);
        assert_eq!(
            row.split,
            Some(if (k + 1) % 10 == 0 {
                Split::Test
            } else {
                Split::Train
            })
        );
        assert!(
            row.thinking
                .as_deref()
                .is_some_and(|t| t.ends_with('.') && t.len() < 200),
            "{:?}",
            row.thinking
        );
        assert!(row_tokens(row) <= 1500, "{}", row.id);
        for (i, (p, r)) in row.prompt.iter().zip(&row.response).enumerate() {
            assert!(
                p.starts_with(&format!(
                    "### Turn {}\n**Action:**\n```json\n[{{\"keystrokes\": \"",
                    i + 1
                )),
                "{p}"
            );
            assert_eq!(p.contains("\n\n**Current State:**\n"), i == 0, "{p}");
            let obs = r.strip_prefix(&format!("{OBSERVATION_MARKER}\n")).unwrap();
            let screen = TerminalScreen::parse(obs);
            assert!(screen.lines.len() <= 20);
            assert!(screen.is_idle(), "{obs}");
            let prompt = screen.prompt().unwrap();
            assert_eq!(
                (prompt.user.as_str(), prompt.host.as_str()),
                ("user", "sandbox")
            );
            assert!(prompt.cwd.starts_with('~'));
            let cmd = typed(p);
            assert!(
                obs.contains(&format!("$ {cmd}\n")) || obs.ends_with(&format!("$ {cmd}")),
                "{cmd:?} not on screen:\n{obs}"
            );
            assert!(
                !obs.contains("aw-sandbox-"),
                "the real sandbox path leaked: {obs}"
            );
        }
    }
}

#[test]
fn held_out_templates_only_in_test_rows() {
    let g = generated();
    let held = |id: &str| DEFAULT_HELD_OUT.contains(&id);
    for row in &g.rows {
        let ids = commands(row);
        assert_eq!(ids.len(), row.turn_idx);
        match row.split {
            Some(Split::Train) => assert!(!ids.iter().any(|id| held(id)), "{}: {ids:?}", row.id),
            Some(Split::Test) => {
                assert!(held(ids.last().unwrap()), "{}: {ids:?}", row.id);
                assert!(!ids[..ids.len() - 1].iter().any(|id| held(id)));
            }
            None => panic!("no split"),
        }
    }
    assert_eq!(
        g.rows
            .iter()
            .filter(|r| r.split == Some(Split::Test))
            .count(),
        6
    );
}

#[test]
fn outputs_are_real() {
    let g = generated();
    let mut errors = 0;
    for row in &g.rows {
        let cmd = typed(&row.current_prompt);
        let obs = row.target_observation().unwrap();
        let after = obs.split(&format!("$ {cmd}\n")).last().unwrap();
        if let Some(rest) = cmd.strip_prefix("seq ") {
            let (a, b) = rest.split_once(' ').unwrap();
            let want: Vec<String> = (a.parse::<i32>().unwrap()..=b.parse().unwrap())
                .map(|i| i.to_string())
                .collect();
            assert_eq!(
                after.lines().take(want.len()).collect::<Vec<_>>(),
                want,
                "{obs}"
            );
        }
        if let Some(rest) = cmd.strip_prefix("expr ") {
            let parts: Vec<&str> = rest.split(' ').collect();
            let (a, b): (i64, i64) = (parts[0].parse().unwrap(), parts[2].parse().unwrap());
            let want = if parts[1] == "+" { a + b } else { a - b };
            assert_eq!(
                after.lines().next(),
                Some(want.to_string().as_str()),
                "{obs}"
            );
        }
        if cmd == "pwd" {
            assert!(after.starts_with("/home/user"), "{obs}");
        }
        errors += usize::from(
            [
                "No such file",
                "command not found",
                "Is a directory",
                "File exists",
                "cannot access",
            ]
            .iter()
            .any(|e| after.contains(e)),
        );
    }
    assert!(errors > 0, "no error outputs among 60 rows");
}

#[test]
fn nothing_outside_the_sandboxes_is_touched() {
    let g = generated();
    let names: Vec<String> = std::fs::read_dir(g.parent.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["sentinel.txt"],
        "sandboxes are removed and nothing else appears"
    );
    let sentinel = g.parent.path().join("sentinel.txt");
    assert_eq!(
        std::fs::read_to_string(&sentinel).unwrap(),
        g.sentinel_before.0
    );
    assert_eq!(
        std::fs::metadata(&sentinel).unwrap().modified().unwrap(),
        g.sentinel_before.1
    );
}

#[test]
fn same_seed_same_rows() {
    let cfg = TerminalDataConfig {
        n: 6,
        seed: 99,
        ..Default::default()
    };
    let a = generate_terminal(&cfg).unwrap();
    let b = generate_terminal(&cfg).unwrap();
    assert_eq!(a, b);
    let c = generate_terminal(&TerminalDataConfig { seed: 100, ..cfg }).unwrap();
    assert_ne!(a[0].prompt, c[0].prompt);
}

#[test]
fn custom_held_out_and_no_test_split() {
    let cfg = TerminalDataConfig {
        n: 4,
        seed: 5,
        test_every: 0,
        held_out: vec![],
        ..Default::default()
    };
    let rows = generate_terminal(&cfg).unwrap();
    assert!(rows.iter().all(|r| r.split == Some(Split::Train)));
    let err = generate_terminal(&TerminalDataConfig {
        n: 1,
        held_out: vec![],
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("no held-out templates"), "{err}");
}
