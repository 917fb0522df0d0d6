//! Android rows from real hierarchies: derived states and local edits with exact effects.
//!
//! For each row the generator takes a dump from its split's pool, cuts a subtree that fits the
//! state budget ([`augment::pick_subtree`]), varies it (shuffled or replaced texts, moved and
//! scaled bounds, flipped flags, synthetic fields, switches, disabled buttons and labels), then
//! picks one step, or 2 to `max_turns` steps for a multi-turn row ([`pick::pick_step`]):
//! typing into an editable node, tapping or toggling a checkable node, any action on a
//! disabled node, a tap on a non-interactive node, an invalid action, scrolling a list down,
//! or back with a dialog open. The next state of the first five is computed exactly by
//! [`agentworld_world::action::android::apply`]; scroll and back follow the generator's own exact rules
//! ([`moves`]: the list shifts by half its items and new made-up items fill the end; back
//! removes the dialog, which the generator adds for the purpose, and always comes first).
//! States are written in `android-compact`, actions as
//! Python-style JSON (`{"action": "tap", "target": "#wifi"}`). Held-out rows (every
//! `test_every`-th) come only from held-out dump files, training rows never do. Each row
//! names its dump in an extra `source` field.

pub mod augment;
pub mod moves;
pub mod pick;
pub mod screen;
#[cfg(test)]
mod tests;

use augment::{pick_subtree, renumber_bounds, replace_texts, shuffle_texts, toggle_flags};
use moves::{insert_list, insert_overlay, scroll_lists};
use pick::{KINDS, Kind, pick_step, thinking};
use screen::synthetic_screen;

use super::rng::Rng;
use super::row_tokens;
use agentworld_world::messages::{observation_response, python_json, turn_prompt};
use agentworld_world::state::android::{AndroidTree, parse_xml, render_compact};
use agentworld_world::{Domain, Error, Result, Row, Split, prompts};

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
        Ok(super::read_named(paths, "dump")?
            .into_iter()
            .map(|(name, xml)| Dump { name, xml })
            .collect())
    }

    /// Reads every `*.xml` file of a directory, sorted by name.
    #[cfg(feature = "native")]
    pub fn load_dir(dir: impl AsRef<std::path::Path>) -> Result<Vec<Dump>> {
        Dump::load(&super::list_files(dir.as_ref(), "xml", "dump")?)
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
    /// Share of multi-turn rows (only for states of at most `max_multi_turn_state_chars`).
    pub multi_turn_fraction: f64,
    /// Most turns in a multi-turn row (2 to `max_turns`, uniformly); below 2, every row has
    /// one turn.
    pub max_turns: usize,
    /// Largest first state of a multi-turn row, in characters.
    pub max_multi_turn_state_chars: usize,
    /// Largest estimated token count of a row ([`super::row_tokens`]).
    pub max_row_tokens: usize,
    /// Share of training rows whose state is cut from a made-up screen
    /// ([`screen::synthetic_screen`], `source` "synthetic") instead of a dump; held-out rows
    /// always come from held-out dumps.
    pub synthetic_share: f64,
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
            max_turns: 4,
            max_multi_turn_state_chars: 550,
            max_row_tokens: 1500,
            synthetic_share: 0.0,
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
        // the turn count is drawn once per row, so failed attempts (more likely for long
        // rows) do not shift the mix; every 10 failed attempts drop one turn
        let mut draw = Rng::fork(cfg.seed, (k as u64) << 8 | 255);
        let wanted = if cfg.max_turns >= 2 && draw.chance(cfg.multi_turn_fraction) {
            2 + draw.below(cfg.max_turns - 1)
        } else {
            1
        };
        // Drawn after the turn count, so a share of 0 leaves every row as it was.
        let synthetic =
            split == Split::Train && cfg.synthetic_share > 0.0 && draw.chance(cfg.synthetic_share);
        let row = (0..40u64)
            .find_map(|attempt| {
                let mut rng = Rng::fork(cfg.seed, (k as u64) << 8 | attempt);
                let turns_n = wanted.saturating_sub(attempt as usize / 10).max(1);
                let mut row = episode(cfg, pool, &mut rng, k, turns_n, synthetic)?;
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
    turns_n: usize,
    synthetic: bool,
) -> Option<Row> {
    let made;
    let (source, base) = if synthetic {
        made = synthetic_screen(rng);
        ("synthetic", &made)
    } else {
        let (name, tree) = rng.pick(pool)?;
        (name.as_str(), tree)
    };
    let multi = turns_n > 1;
    let weights: Vec<u32> = KINDS.iter().map(|(_, w)| *w).collect();
    let mut kinds = vec![KINDS[rng.weighted(&weights)].0];
    for _ in 1..turns_n {
        let earlier = [Kind::Type, Kind::Toggle, Kind::Scroll];
        kinds.insert(0, earlier[rng.weighted(&[4, 4, 2])]);
    }
    // a dialog covers the screen, so back (closing it) comes first
    if let Some(b) = kinds.iter().position(|&k| k == Kind::Back) {
        kinds.remove(b);
        kinds.insert(0, Kind::Back);
    }
    let budget = if multi {
        cfg.max_multi_turn_state_chars
    } else {
        cfg.max_state_chars
    };
    // leave room for synthetic nodes: a field or two, a list, a dialog
    let mut room = 160;
    if kinds.contains(&Kind::Scroll) {
        room += 260;
    }
    if kinds.contains(&Kind::Back) {
        room += 200;
    }
    let mut state = pick_subtree(base, budget.saturating_sub(room), rng)?;
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
    if kinds.contains(&Kind::Scroll) && scroll_lists(&state).is_empty() {
        insert_list(&mut state, rng)?;
    }
    if kinds[0] == Kind::Back {
        insert_overlay(&mut state, rng)?;
    }
    // Steps may insert synthetic nodes (only the first one may), so pick every step first on
    // a growing tree, then replay them from the final initial state.
    let mut steps = Vec::new();
    let mut current = state.clone();
    for kind in &kinds {
        let before_len = current.len();
        let step = pick_step(&mut current, *kind, rng, steps.is_empty())?;
        if current.len() != before_len {
            // a synthetic node was inserted: it belongs to the initial state too
            state = current.clone();
            if !steps.is_empty() {
                return None;
            }
        }
        current = step.after.clone();
        steps.push(step);
    }
    let first = render_compact(&state);
    if first.len() > budget || state.is_empty() {
        return None;
    }
    let mut turns = Vec::new();
    let mut before = state;
    let mut last_thinking = String::new();
    for (t, step) in steps.iter().enumerate() {
        let after = step.after.clone();
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
    row.extra.insert("source".into(), source.into());
    Some(row)
}
