//! Android rows from real hierarchies: derived states and local edits with exact effects.
//!
//! For each row the generator takes a dump from its split's pool, cuts a subtree that fits the
//! state budget ([`augment::pick_subtree`]), varies it (shuffled or replaced texts, moved and
//! scaled bounds, flipped flags, synthetic fields, switches, disabled buttons and labels), then
//! picks one or two steps ([`pick::pick_step`]): typing into an editable node, tapping or
//! toggling a checkable node, any action on a disabled node, a tap on a non-interactive node,
//! or an invalid action. Each step's next state is computed exactly by
//! [`crate::action::android::apply`]; states are written in `android-compact`, actions as
//! Python-style JSON (`{"action": "tap", "target": "#wifi"}`). Held-out rows (every
//! `test_every`-th) come only from held-out dump files, training rows never do. Each row
//! names its dump in an extra `source` field.

pub mod augment;
pub mod pick;

use augment::{pick_subtree, renumber_bounds, replace_texts, shuffle_texts, toggle_flags};
use pick::{KINDS, Kind, pick_step, thinking};

use super::rng::Rng;
use super::row_tokens;
use crate::action::android::Outcome;
use crate::messages::{observation_response, python_json, turn_prompt};
use crate::state::android::{AndroidTree, parse_xml, render_compact};
use crate::{Domain, Error, Result, Row, Split, prompts};

/// A UI dump given to the generator: a name (its file name) and its XML text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    /// The file name, used for the held-out rule.
    pub name: String,
    /// uiautomator or Appium XML.
    pub xml: String,
}

impl Dump {
    /// Reads dump files; each dump's name is its file name.
    #[cfg(feature = "native")]
    pub fn load(paths: &[std::path::PathBuf]) -> Result<Vec<Dump>> {
        paths
            .iter()
            .map(|p| {
                let xml = std::fs::read_to_string(p)
                    .map_err(|e| Error::io(format!("cannot read dump {}", p.display()), e))?;
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Ok(Dump { name, xml })
            })
            .collect()
    }

    /// Reads every `*.xml` file of a directory, sorted by name.
    #[cfg(feature = "native")]
    pub fn load_dir(dir: impl AsRef<std::path::Path>) -> Result<Vec<Dump>> {
        let dir = dir.as_ref();
        let read = std::fs::read_dir(dir)
            .map_err(|e| Error::io(format!("cannot read dump dir {}", dir.display()), e))?;
        let mut paths: Vec<std::path::PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "xml"))
            .collect();
        paths.sort();
        if paths.is_empty() {
            return Err(Error::Data(format!("no .xml dumps in {}", dir.display())));
        }
        Dump::load(&paths)
    }
}

/// Settings for [`generate_android`].
#[derive(Debug, Clone)]
pub struct AndroidDataConfig {
    /// Rows to produce.
    pub n: usize,
    /// Seed; the same seed and dumps give the same rows.
    pub seed: u64,
    /// The real hierarchies to derive states from.
    pub dumps: Vec<Dump>,
    /// Dumps kept for held-out rows: a dump is held out when its name equals or starts with
    /// one of these. `None`: the last dump by name (when there are at least two).
    pub held_out: Option<Vec<String>>,
    /// Every `test_every`-th row (1-based) is held out; 0 means no held-out rows.
    pub test_every: usize,
    /// Largest `android-compact` state, in characters.
    pub max_state_chars: usize,
    /// Share of two-turn rows (only for states of at most `max_multi_turn_state_chars`).
    pub multi_turn_fraction: f64,
    /// Largest state for a two-turn row, in characters.
    pub max_multi_turn_state_chars: usize,
    /// Largest estimated token count of a row ([`super::row_tokens`]).
    pub max_row_tokens: usize,
    /// The system prompt written into each row.
    pub system_prompt: String,
}

impl Default for AndroidDataConfig {
    fn default() -> Self {
        AndroidDataConfig {
            n: 100,
            seed: 0,
            dumps: Vec::new(),
            held_out: None,
            test_every: 10,
            max_state_chars: 900,
            multi_turn_fraction: 0.3,
            max_multi_turn_state_chars: 550,
            max_row_tokens: 1500,
            system_prompt: prompts::builtin(Domain::Android).to_string(),
        }
    }
}

/// Generates `cfg.n` Android rows, in a stable order (see the module docs).
pub fn generate_android(cfg: &AndroidDataConfig) -> Result<Vec<Row>> {
    if cfg.dumps.is_empty() {
        return Err(Error::Data("no Android dumps given".into()));
    }
    let mut dumps: Vec<&Dump> = cfg.dumps.iter().collect();
    dumps.sort_by(|a, b| a.name.cmp(&b.name));
    let held: Vec<String> = match &cfg.held_out {
        Some(h) => h.clone(),
        None if dumps.len() >= 2 => vec![dumps[dumps.len() - 1].name.clone()],
        None => Vec::new(),
    };
    let is_held = |d: &Dump| {
        held.iter()
            .any(|h| d.name == *h || d.name.starts_with(h.as_str()))
    };
    let mut train = Vec::new();
    let mut test = Vec::new();
    for d in dumps {
        let tree = parse_xml(&d.xml)
            .map_err(|e| Error::Data(format!("dump {}: {e}", d.name)))?
            .tree;
        let entry = (d.name.clone(), tree);
        if is_held(d) {
            test.push(entry)
        } else {
            train.push(entry)
        }
    }
    if train.is_empty() {
        return Err(Error::Data(
            "every dump is held out; nothing is left for training".into(),
        ));
    }
    if test.is_empty() && cfg.test_every > 0 {
        return Err(Error::Data(
            "held-out rows need a held-out dump: give at least two dumps, or set test_every to 0"
                .into(),
        ));
    }
    let mut rows = Vec::with_capacity(cfg.n);
    for k in 0..cfg.n {
        let split = if cfg.test_every > 0 && (k + 1) % cfg.test_every == 0 {
            Split::Test
        } else {
            Split::Train
        };
        let pool = if split == Split::Test { &test } else { &train };
        let row = (0..40u64)
            .find_map(|attempt| {
                let mut rng = Rng::fork(cfg.seed, (k as u64) << 8 | attempt);
                let mut row = episode(cfg, pool, &mut rng, k)?;
                row.split = Some(split);
                (row_tokens(&row) <= cfg.max_row_tokens).then_some(row)
            })
            .ok_or_else(|| {
                Error::Data(format!(
                    "row {k}: no state fit in {} tokens",
                    cfg.max_row_tokens
                ))
            })?;
        rows.push(row);
    }
    Ok(rows)
}

fn episode(
    cfg: &AndroidDataConfig,
    pool: &[(String, AndroidTree)],
    rng: &mut Rng,
    k: usize,
) -> Option<Row> {
    let (source, base) = rng.pick(pool)?;
    let two_turns = rng.chance(cfg.multi_turn_fraction);
    let budget = if two_turns {
        cfg.max_multi_turn_state_chars
    } else {
        cfg.max_state_chars
    };
    // leave room for a synthetic node or two
    let mut state = pick_subtree(base, budget.saturating_sub(160), rng)?;
    if rng.chance(0.2) {
        shuffle_texts(&mut state, rng);
    }
    if rng.chance(0.3) {
        replace_texts(&mut state, rng);
    }
    if rng.chance(0.3) {
        renumber_bounds(&mut state, rng);
    }
    if rng.chance(0.3) {
        toggle_flags(&mut state, rng);
    }
    let weights: Vec<u32> = KINDS.iter().map(|(_, w)| *w).collect();
    let mut kinds = vec![KINDS[rng.weighted(&weights)].0];
    if two_turns {
        kinds.insert(
            0,
            if rng.chance(0.5) {
                Kind::Type
            } else {
                Kind::Toggle
            },
        );
    }
    // Steps may insert synthetic nodes, so pick every step first on a growing tree, then
    // replay them from the final initial state.
    let mut steps = Vec::new();
    let mut current = state.clone();
    for kind in &kinds {
        let before_len = current.len();
        let step = pick_step(&mut current, *kind, rng)?;
        if current.len() != before_len {
            // a synthetic node was inserted: it belongs to the initial state too
            state = current.clone();
            if !steps.is_empty() {
                return None;
            }
        }
        let after = step.outcome.tree_after(&current)?.clone();
        steps.push(step);
        current = after;
    }
    let first = render_compact(&state);
    let limit = if steps.len() > 1 {
        cfg.max_multi_turn_state_chars
    } else {
        cfg.max_state_chars
    };
    if first.len() > limit || state.is_empty() {
        return None;
    }
    let mut turns = Vec::new();
    let mut before = state;
    let mut last_thinking = String::new();
    for (t, step) in steps.iter().enumerate() {
        let after = match &step.outcome {
            Outcome::Edited { tree, .. } => tree.clone(),
            _ => before.clone(),
        };
        let action = python_json(&serde_json::to_value(&step.action).ok()?);
        let state_text = (t == 0).then(|| render_compact(&before));
        turns.push((
            turn_prompt(t + 1, &action, state_text.as_deref()),
            observation_response(&render_compact(&after)),
        ));
        last_thinking = thinking(&before, &step.action, &step.outcome);
        before = after;
    }
    let mut row = Row::from_turns(
        Domain::Android,
        format!("android-{}-{k:05}", cfg.seed),
        cfg.system_prompt.clone(),
        turns,
    );
    row.thinking = Some(last_thinking);
    row.extra.insert("source".into(), source.clone().into());
    Some(row)
}
