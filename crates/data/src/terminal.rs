//! Terminal rows from real bash: seeded sandboxes, template commands, rendered screens.
//!
//! Each row is one episode in a fresh sandbox ([`sandbox::Sandbox`]): a seeded handful of files
//! and directories (sometimes a shell script without the execute bit), one or two warm-up
//! commands whose screen becomes the first turn's **Current State**, then one to `max_turns`
//! turns (weighted by `turn_weights`). Commands range from `ls` to pipelines, `&&`/`||` chains
//! and `for` loops, and include errors (missing files, command not found, a script without
//! the execute bit, `cd` into a file, …; see [`commands`]); every output is bash's own. Every
//! turn's action is
//! `[{"keystrokes": "<command>\n", "duration": 0.5}]` and its observation the last
//! `screen_rows` lines of the virtual terminal ([`screen::Screen`]) with the prompt
//! `user@sandbox:<dir>$ `. The last turn is the row's target. Held-out rows (every
//! `test_every`-th) end with a held-out template; training rows never contain one. Each row
//! lists its turns' template ids in an extra `commands` field (warm-ups excluded: they are
//! always `ls`, `ls_l`, `ls_dir` or `cat`).

pub mod commands;
pub mod sandbox;
pub mod screen;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use commands::{
    Ctx, DEFAULT_HELD_OUT, DIR_NAMES, FILE_NAMES, Planned, SCRIPT_NAMES, TEMPLATES, WORDS, is_safe,
    template,
};
use sandbox::{Limits, Network, Sandbox};
use screen::{Screen, normalize_output};
use serde_json::Value;

use super::rng::Rng;
use super::row_tokens;
use agentworld_world::messages::{observation_response, python_json, turn_prompt};
use agentworld_world::{Domain, Error, Result, Row, Split, prompts};

/// Settings for [`generate_terminal`].
#[derive(Debug, Clone)]
pub struct TerminalDataConfig {
    /// Rows to produce.
    pub n: usize,
    /// Seed; the same seed gives the same rows.
    pub seed: u64,
    /// Lines of screen shown per state and observation.
    pub screen_rows: usize,
    /// Characters kept per screen line.
    pub max_width: usize,
    /// Every `test_every`-th row (1-based) is held out; 0 means no held-out rows.
    pub test_every: usize,
    /// Template ids that appear only in held-out rows.
    pub held_out: Vec<String>,
    /// Relative weights of 1-, 2-, 3-, … turn rows; only the first `max_turns` count.
    pub turn_weights: Vec<u32>,
    /// Most turns in a row (at least 1).
    pub max_turns: usize,
    /// Largest estimated token count of a row ([`super::row_tokens`]).
    pub max_row_tokens: usize,
    /// Per-command limits.
    pub limits: Limits,
    /// Network isolation; `None` probes with [`Network::detect`].
    pub network: Option<Network>,
    /// Where sandboxes are created; `None` is the system temp directory.
    pub sandbox_parent: Option<PathBuf>,
    /// The system prompt written into each row.
    pub system_prompt: String,
}

impl Default for TerminalDataConfig {
    fn default() -> Self {
        TerminalDataConfig {
            n: 100,
            seed: 0,
            screen_rows: 20,
            max_width: 100,
            test_every: 10,
            held_out: DEFAULT_HELD_OUT.iter().map(|s| s.to_string()).collect(),
            turn_weights: vec![3, 3, 3, 2],
            max_turns: 4,
            max_row_tokens: 1500,
            limits: Limits::default(),
            network: None,
            sandbox_parent: None,
            system_prompt: prompts::builtin(Domain::Terminal).to_string(),
        }
    }
}

/// Generates `cfg.n` terminal rows, in a stable order (see the module docs).
pub fn generate_terminal(cfg: &TerminalDataConfig) -> Result<Vec<Row>> {
    for id in &cfg.held_out {
        if template(id).is_none() {
            return Err(Error::Data(format!("unknown held-out template {id:?}")));
        }
    }
    let train: Vec<&str> = TEMPLATES
        .iter()
        .map(|t| t.id)
        .filter(|id| !cfg.held_out.iter().any(|h| h == id))
        .collect();
    let test: Vec<&str> = cfg.held_out.iter().map(String::as_str).collect();
    if test.is_empty() && cfg.test_every > 0 {
        return Err(Error::Data(
            "held-out rows requested but no held-out templates given".into(),
        ));
    }
    let weights: Vec<u32> = cfg
        .turn_weights
        .iter()
        .copied()
        .take(cfg.max_turns)
        .collect();
    if weights.iter().all(|&w| w == 0) {
        return Err(Error::Data(
            "turn_weights gives no weight to 1..=max_turns turns".into(),
        ));
    }
    let network = cfg.network.unwrap_or_else(Network::detect);
    let mut rows = Vec::with_capacity(cfg.n);
    for k in 0..cfg.n {
        let split = if cfg.test_every > 0 && (k + 1) % cfg.test_every == 0 {
            Split::Test
        } else {
            Split::Train
        };
        let finals = if split == Split::Test { &test } else { &train };
        let mut last_error = None;
        let mut made = None;
        for attempt in 0..12u64 {
            let mut rng = Rng::fork(cfg.seed, (k as u64) << 8 | attempt);
            match episode(cfg, network, &mut rng, &train, finals, &weights) {
                Ok(Some((turns, thinking, ids))) => {
                    let mut row = Row::from_turns(
                        Domain::Terminal,
                        format!("terminal-{}-{k:05}", cfg.seed),
                        cfg.system_prompt.clone(),
                        turns,
                    );
                    row.thinking = Some(thinking);
                    row.split = Some(split);
                    row.extra.insert("commands".into(), ids.into());
                    if row_tokens(&row) <= cfg.max_row_tokens {
                        made = Some(row);
                        break;
                    }
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        match made {
            Some(row) => rows.push(row),
            None => {
                return Err(last_error.unwrap_or_else(|| {
                    Error::Data(format!(
                        "row {k}: no episode fit in {} tokens",
                        cfg.max_row_tokens
                    ))
                }));
            }
        }
    }
    Ok(rows)
}

/// The `[{"keystrokes": …, "duration": …}]` action text for a command.
pub fn keystrokes_action(command: &str, duration: f64) -> String {
    let keys = python_json(&Value::String(format!("{command}\n")));
    format!(
        "[{{\"keystrokes\": {keys}, \"duration\": {}}}]",
        python_json(&serde_json::json!(duration))
    )
}

type Turns = Vec<(String, String)>;
type Episode = (Turns, String, Vec<String>);

/// One episode: `Ok(None)` when a template could not be used (the caller retries).
fn episode(
    cfg: &TerminalDataConfig,
    network: Network,
    rng: &mut Rng,
    train: &[&str],
    finals: &[&str],
    turn_weights: &[u32],
) -> Result<Option<Episode>> {
    let mut sb = match &cfg.sandbox_parent {
        Some(parent) => Sandbox::new_in(parent, network, rng.next_u64())?,
        None => Sandbox::new(network, rng.next_u64())?,
    };
    seed_files(&sb, rng)?;
    let mut screen = Screen::new(&sb.prompt_dir(), cfg.max_width);
    let warmups = 1 + rng.below(2);
    for _ in 0..warmups {
        let choices: Vec<&str> = ["ls", "ls", "ls_l", "cat", "ls_dir", "cat"]
            .into_iter()
            .filter(|id| train.contains(id))
            .collect();
        let Some(&id) = rng.pick(&choices) else { break };
        let Some(planned) = plan(&sb, rng, id)? else {
            continue;
        };
        if run(&mut sb, &mut screen, &planned, cfg)?.is_none() {
            return Ok(None);
        }
    }
    let state = screen.render(cfg.screen_rows);
    let turns_n = 1 + rng.weighted(turn_weights);
    let mut turns = Vec::with_capacity(turns_n);
    let mut thinking = String::new();
    let mut ids = Vec::with_capacity(turns_n);
    for t in 1..=turns_n {
        let pool = if t == turns_n { finals } else { train };
        let mut planned = None;
        for _ in 0..8 {
            let id = *rng.pick(pool).unwrap_or(&"ls");
            if let Some(p) = plan(&sb, rng, id)? {
                planned = Some(p);
                ids.push(id.to_string());
                break;
            }
        }
        let Some(planned) = planned else {
            return Ok(None);
        };
        let c = &planned.command;
        let duration = if c.contains(['|', '&']) || c.starts_with("find") || c.starts_with("for ") {
            1.0
        } else {
            0.5
        };
        let Some(outcome) = run(&mut sb, &mut screen, &planned, cfg)? else {
            return Ok(None);
        };
        let observation = screen.render(cfg.screen_rows);
        let action = keystrokes_action(&planned.command, duration);
        let prompt = turn_prompt(t, &action, (t == 1).then_some(state.as_str()));
        turns.push((prompt, observation_response(&observation)));
        thinking = format!("{}; {outcome}.", planned.hint);
    }
    Ok(Some((turns, thinking, ids)))
}

fn plan(sb: &Sandbox, rng: &mut Rng, id: &str) -> Result<Option<Planned>> {
    let Some(t) = template(id) else {
        return Ok(None);
    };
    let (files, dirs) = sb.entries()?;
    let executable = files
        .iter()
        .filter(|f| sb.is_executable(f))
        .cloned()
        .collect();
    let read = |name: &str| sb.read_file(name);
    let mut ctx = Ctx {
        rng,
        files,
        dirs,
        at_root: sb.at_root(),
        dir: sb.prompt_dir(),
        read: &read,
        executable,
    };
    Ok((t.build)(&mut ctx).filter(|p| is_safe(&p.command, sb.at_root())))
}

/// Runs a planned command and shows it; returns the outcome clause, `None` on a timeout.
fn run(
    sb: &mut Sandbox,
    screen: &mut Screen,
    planned: &Planned,
    cfg: &TerminalDataConfig,
) -> Result<Option<String>> {
    let r = sb.run(&planned.command, cfg.limits)?;
    if r.timed_out || r.truncated {
        return Ok(None);
    }
    let output = normalize_output(&r.output);
    screen.show(&planned.command, &output, &sb.prompt_dir());
    let lines = output.lines().count();
    let outcome = match (r.status, lines) {
        (Some(0), 0) => "it prints nothing, so a new prompt follows".to_string(),
        (Some(0), 1) => "it prints one line, then a new prompt".to_string(),
        (Some(0), n) => format!("it prints {n} lines, then a new prompt"),
        (Some(s), 0) => format!("it exits with status {s} and prints nothing"),
        (Some(s), _) => format!("it fails with status {s} and an error message, then a new prompt"),
        (None, _) => "it is killed".to_string(),
    };
    Ok(Some(outcome))
}

/// Seeds 2–4 files, 0–2 directories (some holding a file) and, 40% of the time, a shell
/// script without the execute bit.
fn seed_files(sb: &Sandbox, rng: &mut Rng) -> Result<()> {
    let mut names: Vec<&str> = FILE_NAMES.to_vec();
    rng.shuffle(&mut names);
    let vocab: Vec<&str> = (0..6).filter_map(|_| rng.pick(&WORDS).copied()).collect();
    for name in names.iter().take(2 + rng.below(3)) {
        sb.write_file(name, &content(name, rng, &vocab))?;
    }
    let mut dirs: Vec<&str> = DIR_NAMES.to_vec();
    rng.shuffle(&mut dirs);
    for dir in dirs.iter().take(rng.below(3)) {
        let inner = names[names.len() - 1 - rng.below(4)];
        if rng.chance(0.6) {
            sb.write_file(&format!("{dir}/{inner}"), &content(inner, rng, &vocab))?;
        } else {
            sb.write_file(&format!("{dir}/.keep"), "")?;
        }
    }
    if rng.chance(0.4) {
        let name = *rng.pick(&SCRIPT_NAMES).unwrap_or(&"run.sh");
        let words = (0..2)
            .filter_map(|_| rng.pick(&vocab).copied())
            .collect::<Vec<_>>()
            .join(" ");
        let body = if rng.chance(0.5) {
            format!("#!/bin/sh\necho {words}\n")
        } else {
            format!("#!/bin/sh\necho {words}\nls | wc -l\n")
        };
        sb.write_file(name, &body)?;
    }
    Ok(())
}

fn content(name: &str, rng: &mut Rng, vocab: &[&str]) -> String {
    let lines = 2 + rng.below(5);
    let mut out = String::new();
    if name.ends_with(".csv") {
        out.push_str("name,count\n");
        for _ in 0..lines {
            out.push_str(&format!(
                "{},{}\n",
                rng.pick(vocab).unwrap_or(&"x"),
                rng.below(100)
            ));
        }
    } else if name.starts_with("numbers") {
        for _ in 0..lines {
            out.push_str(&format!("{}\n", rng.below(1000)));
        }
    } else {
        for _ in 0..lines {
            let words = 1 + rng.below(3);
            let line: Vec<&str> = (0..words)
                .filter_map(|_| rng.pick(vocab).copied())
                .collect();
            out.push_str(&line.join(" "));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn keystrokes_are_python_json() {
        assert_eq!(
            keystrokes_action("ls -l", 0.5),
            r#"[{"keystrokes": "ls -l\n", "duration": 0.5}]"#
        );
        assert_eq!(
            keystrokes_action("printf '%s\\n' a", 1.0),
            r#"[{"keystrokes": "printf '%s\\n' a\n", "duration": 1.0}]"#
        );
    }

    #[test]
    fn unknown_held_out_template_is_an_error() {
        let cfg = TerminalDataConfig {
            n: 1,
            held_out: vec!["nope".into()],
            ..Default::default()
        };
        assert!(
            generate_terminal(&cfg)
                .unwrap_err()
                .to_string()
                .contains("nope")
        );
    }
}
