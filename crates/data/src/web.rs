//! Web rows: BrowserGym accessibility-tree states with exact effects, from real HTML pages
//! and a small built-in site.
//!
//! Pages come from two places: real HTML files given by the caller ([`WebPage`], parsed with
//! the world crate's HTML parser and folded to what an accessibility tree shows, see
//! [`agentworld_world::state::web_page::html`]) and the built-in site ([`site`]): a contact form, a
//! settings form, a catalog with detail pages, a small shop (home → products → product →
//! back) and a booking form, each varied per row with made-up names, labels and values from
//! small word lists, its fields shuffled and subsetted. A page is rendered as BrowserGym `axtree` text (`[bid] role 'name'` lines
//! indented by a tab per depth, `, value='…'`, `, checked='true'`, `, selected=True`,
//! `, focused`, `, disabled=True`), bids numbered in document order from a random base.
//!
//! Each row takes 1 to `max_turns` BrowserGym actions (`fill`, `select_option`, `click`,
//! `keyboard_type`, `go_back`), each applied exactly on the page model ([`page`]): fills and
//! selections change one node, a checkbox click toggles it, a click on a textbox focuses it so
//! a later `keyboard_type` types there, a link or a submit button shows another page and
//! `go_back` returns to the previous one as it was left; actions on disabled, missing or inert
//! elements leave the page unchanged. Held-out rows (every `test_every`-th) come only from the
//! held-out real pages, the held-out built-in family and the held-out word lists; training
//! rows never use them. Each row names its page in an extra `source` field. A share of the
//! training rows (`synthetic_share`) is on made-up sites instead ([`made`]: a layout and words
//! new in every row, so they cannot be remembered), and a share (`drill_share`) are drills:
//! one edit on a short made-up form ([`made::drill`]), many edits to a batch.

pub mod made;
pub mod page;
pub mod pick;
pub mod site;
#[cfg(test)]
mod tests;

use agentworld_world::state::web_page::html::page_from_html;
use page::{Browser, Page};
use site::{Family, TEST_FAMILIES, TEST_WORDS, TRAIN_FAMILIES, TRAIN_WORDS, Words};

use super::rng::Rng;
use super::row_tokens;
use agentworld_world::messages::{observation_response, turn_prompt};
use agentworld_world::{Domain, Error, Result, Row, Split, prompts};

/// A real HTML page given to the generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPage {
    /// The file name, used for the held-out rule and as the rows' `source`.
    pub name: String,
    /// The page's HTML.
    pub html: String,
}

impl WebPage {
    /// Reads every `*.html` file of a directory, sorted by name; each page's name is its file
    /// name.
    #[cfg(feature = "native")]
    pub fn load_dir(dir: impl AsRef<std::path::Path>) -> Result<Vec<WebPage>> {
        let paths = super::list_files(dir.as_ref(), "html", "page")?;
        Ok(super::read_named(&paths, "page")?
            .into_iter()
            .map(|(name, html)| WebPage { name, html })
            .collect())
    }
}

/// Settings for [`generate_web`].
#[derive(Debug, Clone)]
pub struct WebDataConfig {
    /// Rows to produce.
    pub n: usize,
    /// Seed; the same seed and pages give the same rows.
    pub seed: u64,
    /// Real pages (may be empty: the built-in site alone gives rows).
    pub pages: Vec<WebPage>,
    /// Real pages kept for held-out rows: a page is held out when its name equals or starts
    /// with one of these. `None`: the last page by name (when there are at least two).
    pub held_out: Option<Vec<String>>,
    /// Every `test_every`-th row (1-based) is held out; 0 means no held-out rows.
    pub test_every: usize,
    /// Largest rendered state, in characters.
    pub max_state_chars: usize,
    /// Largest rendered state of a multi-turn row (every turn's), in characters.
    pub max_multi_turn_state_chars: usize,
    /// Share of multi-turn rows.
    pub multi_turn_fraction: f64,
    /// Most turns in a row (at least 1).
    pub max_turns: usize,
    /// Share of rows taken from real pages (when there are any for the split).
    pub real_page_fraction: f64,
    /// Largest estimated token count of a row ([`super::row_tokens`]).
    pub max_row_tokens: usize,
    /// Share of training rows on a made-up site ([`made`], `source` "synthetic") instead of a
    /// real page or a built-in family; held-out rows never use one. 0 leaves every row as
    /// it was without them.
    pub synthetic_share: f64,
    /// Share of training rows that are drills ([`made::drill`]): one action on a field (fill,
    /// focus, typing, select, toggle, or a no-op that names one) of a one-page form made up
    /// for the row, so that the line an action edits is told only by its bid. They are short,
    /// so a batch holds many edits. Drawn after `synthetic_share`, from the rows left; held-out
    /// rows never use one. 0 leaves every row as it was without them.
    pub drill_share: f64,
    /// The system prompt written into each row.
    pub system_prompt: String,
}

impl Default for WebDataConfig {
    fn default() -> Self {
        WebDataConfig {
            n: 100,
            seed: 0,
            pages: Vec::new(),
            held_out: None,
            test_every: 10,
            max_state_chars: 700,
            max_multi_turn_state_chars: 450,
            multi_turn_fraction: 0.4,
            max_turns: 4,
            real_page_fraction: 0.3,
            max_row_tokens: 1300,
            synthetic_share: 0.0,
            drill_share: 0.0,
            system_prompt: prompts::builtin(Domain::Web).to_string(),
        }
    }
}

/// Where a row's pages come from.
#[derive(Debug, Clone)]
enum Source {
    Real(String, Page),
    Builtin(Family),
    /// A made-up site ([`made`]).
    Made,
    /// A drill form ([`made::drill`]).
    Drill,
}

/// One split's sources and words.
struct Pool {
    real: Vec<(String, Page)>,
    families: Vec<Family>,
    words: &'static Words,
}

/// Generates `cfg.n` Web rows, in a stable order (see the module docs).
pub fn generate_web(cfg: &WebDataConfig) -> Result<Vec<Row>> {
    let mut pages: Vec<&WebPage> = cfg.pages.iter().collect();
    pages.sort_by(|a, b| a.name.cmp(&b.name));
    let held: Vec<String> = match &cfg.held_out {
        Some(h) => h.clone(),
        None if pages.len() >= 2 => vec![pages[pages.len() - 1].name.clone()],
        None => Vec::new(),
    };
    let is_held = |p: &WebPage| {
        held.iter()
            .any(|h| p.name == *h || p.name.starts_with(h.as_str()))
    };
    let mut train = Pool {
        real: Vec::new(),
        families: TRAIN_FAMILIES.to_vec(),
        words: &TRAIN_WORDS,
    };
    let mut test = Pool {
        real: Vec::new(),
        families: TEST_FAMILIES.to_vec(),
        words: &TEST_WORDS,
    };
    for p in pages {
        let entry = (p.name.clone(), page_from_html(&p.name, &p.html)?);
        if is_held(p) {
            test.real.push(entry)
        } else {
            train.real.push(entry)
        }
    }
    let max_turns = cfg.max_turns.max(1);
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
        let source = match (made, drill) {
            (true, _) => Some(Source::Made),
            (_, true) => Some(Source::Drill),
            _ => None,
        };
        let row = (0..60u64)
            .find_map(|attempt| {
                let mut rng = Rng::fork(cfg.seed, (k as u64) << 8 | attempt);
                // late attempts drop to one turn, in case every multi-turn try is too long
                let turns_cap = if attempt >= 40 { 1 } else { max_turns };
                let mut row = episode(cfg, pool, &mut rng, k, turns_cap, source.as_ref())?;
                row.split = Some(split);
                (row_tokens(&row) <= cfg.max_row_tokens).then_some(row)
            })
            .ok_or_else(|| {
                Error::Data(format!(
                    "web row {k}: no episode fit in {} state characters and {} tokens",
                    cfg.max_state_chars, cfg.max_row_tokens
                ))
            })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Opens a source: its pages, bids numbered from a random base.
fn open(source: &Source, rng: &mut Rng, words: &Words) -> Browser {
    match source {
        Source::Builtin(f) => site::build(*f, rng, words),
        Source::Made => made::build(rng),
        Source::Drill => made::drill(rng),
        Source::Real(_, page) => {
            let mut page = page.clone();
            let base = 1 + rng.below(30);
            let mut r = rng.clone();
            page.assign_bids(base, || r.chance(0.2));
            rng.next_u64();
            Browser::new(vec![page])
        }
    }
}

fn episode(
    cfg: &WebDataConfig,
    pool: &Pool,
    rng: &mut Rng,
    k: usize,
    max_turns: usize,
    fixed: Option<&Source>,
) -> Option<Row> {
    let source = if let Some(s) = fixed {
        s.clone()
    } else if !pool.real.is_empty() && rng.chance(cfg.real_page_fraction) {
        let (name, page) = rng.pick(&pool.real)?;
        // a page with nothing to act on gives only no-ops: take it less often
        if page.nodes.iter().all(|n| n.role == "StaticText") && rng.chance(0.6) {
            Source::Builtin(*rng.pick(&pool.families)?)
        } else {
            Source::Real(name.clone(), page.clone())
        }
    } else {
        Source::Builtin(*rng.pick(&pool.families)?)
    };
    let name = match &source {
        Source::Real(n, _) => n.clone(),
        Source::Builtin(f) => f.source().to_string(),
        Source::Made => "synthetic".to_string(),
        Source::Drill => "drill".to_string(),
    };
    let drill = matches!(source, Source::Drill);
    let mut browser = open(&source, rng, pool.words);
    let n_turns = if !drill && max_turns > 1 && rng.chance(cfg.multi_turn_fraction) {
        rng.range(2, max_turns as i64) as usize
    } else {
        1
    };
    let limit = if n_turns > 1 {
        cfg.max_multi_turn_state_chars
    } else {
        cfg.max_state_chars
    };
    let first = browser.render();
    if first.len() > limit {
        return None;
    }
    let mut turns = Vec::new();
    let mut prev = None;
    let mut thinking = String::new();
    for t in 0..n_turns {
        let act = if drill {
            pick::pick_edit(&browser, rng, pool.words)
        } else {
            pick::pick_act(&browser, prev.as_ref(), rng, pool.words)
        };
        let before = browser.render();
        let effect = browser.apply(&act);
        let after = browser.render();
        if after.len() > limit {
            return None;
        }
        debug_assert!(!effect.is_noop() || before == after);
        turns.push((
            turn_prompt(t + 1, &act.text(), (t == 0).then_some(before.as_str())),
            observation_response(&after),
        ));
        thinking = effect.thinking();
        prev = Some(effect);
    }
    let mut row = Row::from_turns(
        Domain::Web,
        format!("web-{}-{k:05}", cfg.seed),
        cfg.system_prompt.clone(),
        turns,
    );
    row.thinking = Some(thinking);
    row.extra.insert("source".into(), name.into());
    Some(row)
}
