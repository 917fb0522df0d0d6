//! OS (desktop) rows: small desktops written as OSWorld's accessibility table
//! (`osworld-tsv`), pyautogui actions, and exact next states.
//!
//! Each row starts from a desktop: either our mini desktop ([`build::mini`]: a panel of
//! launcher buttons and up to two app windows — a text editor, a settings dialog with check
//! boxes and a disabled button, a file list — with made-up titles, labels and positions), or a
//! real AT-SPI tree given by the caller ([`AtspiTree`]) under our panel. Then 1 to
//! `max_turns` steps ([`step::pick_step`]): clicks at a node's centre (a check box toggles, a
//! text field takes the focus, a launcher opens its app's default window, a close button
//! removes its window's rows; disabled controls, frames, labels and empty space change
//! nothing), typing into the focused field, backspace, and no-ops (`moveTo`, `ctrl+c`,
//! `WAIT`). Every next state is computed by [`DesktopTree::apply`] (see [`desktop`] for the
//! state conventions: `checked` / `unchecked` / `focused` / `disabled` in the description
//! column). Multi-turn rows give the state only in the first prompt, so the model must track
//! it through the history (click a field, then type; open a window, then close it).
//!
//! Held-out rows (every `test_every`-th) come only from held-out real trees or from mini
//! desktops holding the held-out Find dialog, with held-out word lists ([`build::TEST_WORDS`]);
//! training rows never use them. Each row names its desktop in an extra `source` field. A
//! share of the training rows (`synthetic_share`) starts from a made-up desktop instead
//! ([`build::made_up`]: windows whose titles, controls, layout and words are new in every row,
//! so they cannot be remembered), and a share (`drill_share`) are drills: one step on a
//! control of a desktop with one made-up window ([`build::drill`]).

pub mod build;
pub mod step;
#[cfg(test)]
mod tests;

use agentworld_world::state::desktop;
use desktop::DesktopTree;

use build::{TEST_WORDS, TRAIN_WORDS, Words};
use step::{follow_up, is_noop, pick_step};

use super::rng::Rng;
use super::row_tokens;
use agentworld_world::messages::{observation_response, turn_prompt};
use agentworld_world::{Domain, Error, Result, Row, Split, prompts};

/// A real AT-SPI tree given to the generator: its file name and XML text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtspiTree {
    /// The file name (the row's `source`, and the held-out rule).
    pub name: String,
    /// AT-SPI XML (at-spi2-core fixture form).
    pub xml: String,
}

impl AtspiTree {
    /// Reads every `*.xml` file of a directory, sorted by name.
    #[cfg(feature = "native")]
    pub fn load_dir(dir: impl AsRef<std::path::Path>) -> Result<Vec<AtspiTree>> {
        let paths = super::list_files(dir.as_ref(), "xml", "tree")?;
        Ok(super::read_named(&paths, "tree")?
            .into_iter()
            .map(|(name, xml)| AtspiTree { name, xml })
            .collect())
    }
}

/// Settings for [`generate_os`].
#[derive(Debug, Clone)]
pub struct OsDataConfig {
    /// Rows to produce.
    pub n: usize,
    /// Seed; the same seed and trees give the same rows.
    pub seed: u64,
    /// Real AT-SPI trees (may be empty: then only mini desktops).
    pub trees: Vec<AtspiTree>,
    /// Trees kept for held-out rows: a tree is held out when its name equals or starts with
    /// one of these. `None`: the last tree by name (when there are at least two).
    pub held_out: Option<Vec<String>>,
    /// Every `test_every`-th row (1-based) is held out; 0 means no held-out rows.
    pub test_every: usize,
    /// Largest state table of a one-turn row, in characters.
    pub max_state_chars: usize,
    /// Largest state table of a multi-turn row (every state of it), in characters.
    pub max_multi_turn_state_chars: usize,
    /// Share of multi-turn rows.
    pub multi_turn_fraction: f64,
    /// Most turns in a row (at least 1).
    pub max_turns: usize,
    /// Share of rows built on a real tree (when the split has one).
    pub real_fraction: f64,
    /// Largest estimated token count of a row ([`super::row_tokens`]).
    pub max_row_tokens: usize,
    /// Share of training rows on a made-up desktop ([`build::made_up`], `source`
    /// "synthetic") instead of a mini desktop or a real tree; held-out rows never use one. 0
    /// leaves every row as it was without them.
    pub synthetic_share: f64,
    /// Share of training rows that are drills ([`build::drill`]): one step on a control (a
    /// toggle, a focus, typing, backspace, a disabled button) of a desktop with one made-up
    /// window, one turn, so that a batch holds many edits. Drawn after `synthetic_share`, from
    /// the rows left; held-out rows never use one. 0 leaves every row as it was without them.
    pub drill_share: f64,
    /// The system prompt written into each row.
    pub system_prompt: String,
}

impl Default for OsDataConfig {
    fn default() -> Self {
        OsDataConfig {
            n: 100,
            seed: 0,
            trees: Vec::new(),
            held_out: None,
            test_every: 10,
            max_state_chars: 700,
            max_multi_turn_state_chars: 450,
            multi_turn_fraction: 0.35,
            max_turns: 4,
            real_fraction: 0.3,
            max_row_tokens: 1300,
            synthetic_share: 0.0,
            drill_share: 0.0,
            system_prompt: prompts::builtin(Domain::Os).to_string(),
        }
    }
}

/// One split's desktops and words.
struct Pool {
    trees: Vec<(String, DesktopTree)>,
    test: bool,
    words: &'static Words,
}

/// Generates `cfg.n` OS rows, in a stable order (see the module docs). A tree that is not
/// well-formed AT-SPI XML is an error naming its file.
pub fn generate_os(cfg: &OsDataConfig) -> Result<Vec<Row>> {
    let mut trees: Vec<&AtspiTree> = cfg.trees.iter().collect();
    trees.sort_by(|a, b| a.name.cmp(&b.name));
    let held: Vec<String> = match &cfg.held_out {
        Some(h) => h.clone(),
        None if trees.len() >= 2 => vec![trees[trees.len() - 1].name.clone()],
        None => Vec::new(),
    };
    let mut train = Pool {
        trees: Vec::new(),
        test: false,
        words: &TRAIN_WORDS,
    };
    let mut test = Pool {
        trees: Vec::new(),
        test: true,
        words: &TEST_WORDS,
    };
    for t in trees {
        let desktop = DesktopTree::from_atspi(&t.xml)
            .map_err(|e| Error::Data(format!("tree {}: {e}", t.name)))?;
        let is_held = held
            .iter()
            .any(|h| t.name == *h || t.name.starts_with(h.as_str()));
        let pool = if is_held { &mut test } else { &mut train };
        pool.trees.push((t.name.clone(), desktop));
    }
    let mut rows = Vec::with_capacity(cfg.n);
    for k in 0..cfg.n {
        let split = if cfg.test_every > 0 && (k + 1) % cfg.test_every == 0 {
            Split::Test
        } else {
            Split::Train
        };
        let pool = if split == Split::Test { &test } else { &train };
        // drawn from a stream of its own, so a share of 0 leaves every row as it was
        let made = split == Split::Train
            && cfg.synthetic_share > 0.0
            && Rng::fork(cfg.seed, (k as u64) << 8 | 255).chance(cfg.synthetic_share);
        let drill = split == Split::Train
            && !made
            && cfg.drill_share > 0.0
            && Rng::fork(cfg.seed, (k as u64) << 8 | 254).chance(cfg.drill_share);
        let row = (0..40u64)
            .find_map(|attempt| {
                let mut rng = Rng::fork(cfg.seed, (k as u64) << 8 | attempt);
                let mut row = if drill {
                    drill_episode(cfg, pool, &mut rng, k)?
                } else {
                    episode(cfg, pool, &mut rng, k, made)?
                };
                row.split = Some(split);
                (row_tokens(&row) <= cfg.max_row_tokens).then_some(row)
            })
            .ok_or_else(|| {
                Error::Data(format!(
                    "row {k}: no desktop fit in {} tokens",
                    cfg.max_row_tokens
                ))
            })?;
        rows.push(row);
    }
    Ok(rows)
}

/// A drill row: one step on a control of a drill desktop ([`build::drill`]).
fn drill_episode(cfg: &OsDataConfig, pool: &Pool, rng: &mut Rng, k: usize) -> Option<Row> {
    let (source, start) = build::drill(rng);
    let step = step::pick_edit_step(&start, pool.words, rng)?;
    let before = start.to_tsv();
    let after = step.after.to_tsv();
    if before.len().max(after.len()) > cfg.max_state_chars {
        return None;
    }
    let mut row = Row::from_turns(
        Domain::Os,
        format!("os-{}-{k:05}", cfg.seed),
        cfg.system_prompt.clone(),
        vec![(
            turn_prompt(1, &step.action, Some(before.as_str())),
            observation_response(&after),
        )],
    );
    row.thinking = Some(step.thinking);
    row.extra.insert("source".into(), source.into());
    Some(row)
}

fn episode(cfg: &OsDataConfig, pool: &Pool, rng: &mut Rng, k: usize, made: bool) -> Option<Row> {
    let turns = if cfg.max_turns > 1 && rng.chance(cfg.multi_turn_fraction) {
        rng.range(2, cfg.max_turns as i64) as usize
    } else {
        1
    };
    let limit = if turns > 1 {
        cfg.max_multi_turn_state_chars
    } else {
        cfg.max_state_chars
    };
    let (source, start) = if made {
        build::made_up(rng)
    } else if !pool.trees.is_empty() && rng.chance(cfg.real_fraction) {
        let (name, tree) = rng.pick(&pool.trees)?;
        // leave room for a window opened by a launcher
        (
            name.clone(),
            build::real(rng, tree, limit.saturating_sub(200))?,
        )
    } else {
        build::mini(rng, pool.test, pool.words)
    };
    let mut states = vec![start];
    let mut steps = Vec::new();
    let mut favour = None;
    // at most one step without effect per row, so multi-turn rows keep changing the state
    let mut noop_used = false;
    for _ in 0..turns {
        let step = pick_step(states.last()?, favour, !noop_used, pool.words, rng)?;
        favour = follow_up(step.kind);
        noop_used |= is_noop(step.kind);
        states.push(step.after.clone());
        steps.push(step);
    }
    let texts: Vec<String> = states.iter().map(DesktopTree::to_tsv).collect();
    if texts.iter().any(|s| s.len() > limit) {
        return None;
    }
    let turns: Vec<(String, String)> = steps
        .iter()
        .enumerate()
        .map(|(t, s)| {
            let state = (t == 0).then(|| texts[0].as_str());
            (
                turn_prompt(t + 1, &s.action, state),
                observation_response(&texts[t + 1]),
            )
        })
        .collect();
    let mut row = Row::from_turns(
        Domain::Os,
        format!("os-{}-{k:05}", cfg.seed),
        cfg.system_prompt.clone(),
        turns,
    );
    row.thinking = steps.last().map(|s| s.thinking.clone());
    row.extra.insert("source".into(), source.into());
    Some(row)
}
