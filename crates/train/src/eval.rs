//! Held-out fidelity of a world model, with rule-based metrics and the "state unchanged"
//! baseline beside every figure.
//!
//! Per row: the model generates greedily from the row's infer-step prompt; the observation is
//! extracted as the benchmark's output parser does. Metrics:
//! - well-formed: exactly one closed `<predicted_observation>` block after the thinking, whose
//!   content reads in the domain's format (android-compact for Android);
//! - exact: the observation equals the truth (trailing whitespace ignored);
//! - node F1 ([`agentworld_world::diff::node_f1`]): the predicted tree against the true one on
//!   the structural diff, in the domain's state format ([`state_format`]); for text domains
//!   (terminal) the same over lines ([`agentworld_world::diff::line_f1`]). An output that does
//!   not parse scores 0;
//! - changed-line accuracy (every domain): of the true lines that differ from the current state at the
//!   same position (new screen output; the edited node of an `android-compact` tree, one node per
//!   line), the share reproduced. Rows whose truth equals the current state are left out. The
//!   baseline scores 0 here by construction, so this is the figure that shows whether a model
//!   simulates the action rather than copying the state.
//!
//! The baseline predicts the current state unchanged (the `**Current State:**` of the target
//! turn, or the previous observation when the turn shows none).

use std::ops::Range;

use agentworld_engine::sampling::SamplingParams;
use agentworld_engine::{Engine, GenerateParams, NamedBias, PromptMarks, encode_prompt_marks};
use agentworld_text::observation::{extract_observation, is_well_formed};
use agentworld_world::diff::{ObservationForm, apply_patch, line_f1, node_f1};
use agentworld_world::state::Registry;
use agentworld_world::{Domain, Row};
use burn::tensor::backend::Backend;
use serde::Serialize;

use crate::dataset::prompt_text;
pub use crate::dataset::row_domain;
use crate::error::Result;

/// The outcome of one held-out row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// Row id.
    pub row_id: String,
    /// Domain.
    pub domain: String,
    /// Raw model output (after the prompt's `<think>\n`).
    pub output: String,
    /// Extracted observation: the full next state (a patch-form model's patch applied to the
    /// row's current state, `ModelCard::observation_form_for`).
    pub observation: String,
    /// Format check (see module docs).
    pub well_formed: bool,
    /// Observation equals the truth.
    pub exact: bool,
    /// Node (or line) F1 of the prediction.
    pub node_f1: f64,
    /// The baseline's exact match.
    pub baseline_exact: bool,
    /// The baseline's node (or line) F1.
    pub baseline_node_f1: f64,
    /// Changed-line accuracy (see module docs); `None` when the truth equals the current state.
    pub changed_accuracy: Option<f64>,
    /// Generated tokens.
    pub tokens: usize,
    /// Whether the reasoning agrees with the predicted change ([`crate::agreement::agrees`]);
    /// `None` when the truth equals the current state.
    pub agreement: Option<bool>,
}

/// Figures for one domain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DomainSummary {
    /// Domain.
    pub domain: String,
    /// Held-out rows.
    pub rows: usize,
    /// Share of well-formed outputs.
    pub well_formed: f64,
    /// Share of exact matches.
    pub exact: f64,
    /// Mean node F1 (line F1 for text domains).
    pub node_f1: f64,
    /// What the F1 counts: `node` or `line`.
    pub unit: String,
    /// Baseline exact-match share.
    pub baseline_exact: f64,
    /// Baseline mean node (line) F1.
    pub baseline_node_f1: f64,
    /// Rows whose truth differs from the current state.
    pub changed_rows: usize,
    /// Mean changed-line accuracy over those rows (0 when there are none).
    pub changed_accuracy: f64,
    /// Mean tokens generated a row (reasoning included): what a step costs to decode.
    pub tokens: f64,
    /// Share of the changed rows whose reasoning agrees with the predicted change
    /// ([`crate::agreement::agrees`]; 0 when there are none).
    pub agreement: f64,
}

/// The state format a domain's observations are written in, as the demo data writes them
/// (`None`: plain text, scored by lines).
pub fn state_format(domain: &str) -> Option<&'static str> {
    match domain {
        "android" => Some("android-compact"),
        "web" => Some("axtree"),
        "os" => Some("osworld-tsv"),
        _ => None,
    }
}

/// One observation scored against the truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Equal to the truth (trailing whitespace ignored).
    pub exact: bool,
    /// Node (or line) F1.
    pub node_f1: f64,
    /// Reads in the domain's format with no warnings.
    pub parses: bool,
}

/// Scores one observation against the truth in the domain's format ([`state_format`]).
pub fn score(domain: &str, predicted: &str, truth: &str) -> Score {
    let exact = predicted.trim_end() == truth.trim_end();
    let Some(format) = state_format(domain) else {
        return Score {
            exact,
            node_f1: line_f1(predicted, truth).f1(),
            parses: true,
        };
    };
    let registry = Registry::standard();
    let (Ok(truth), Ok(predicted)) = (
        registry.parse(format, truth),
        registry.parse(format, predicted),
    ) else {
        return Score {
            exact,
            node_f1: 0.0,
            parses: false,
        };
    };
    Score {
        exact,
        node_f1: node_f1(&predicted.tree, &truth.tree).f1(),
        parses: predicted.warnings.is_empty(),
    }
}

/// Changed-line accuracy of `predicted` (see module docs): of the lines of `truth` that differ
/// from `current` at the same position, the share `predicted` has at that position (trailing
/// whitespace ignored). `None` when no line differs.
pub fn changed_accuracy(current: &str, predicted: &str, truth: &str) -> Option<f64> {
    let lines = |s: &str| -> Vec<String> {
        s.trim_end()
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect()
    };
    let (current, predicted, truth) = (lines(current), lines(predicted), lines(truth));
    let changed: Vec<usize> = (0..truth.len())
        .filter(|&i| current.get(i) != Some(&truth[i]))
        .collect();
    if changed.is_empty() {
        return None;
    }
    let right = changed
        .iter()
        .filter(|&&i| predicted.get(i) == Some(&truth[i]))
        .count();
    Some(right as f64 / changed.len() as f64)
}

/// Runs the model on held-out rows, `batch_size` rows of one domain at a time, greedily with
/// the copy prior `copy_bias(domain)` ([`SamplingParams::copy_bias`], 0: plain greedy) and,
/// where `named_copy_bias(domain)` gives one, that bias on the lines the action names; the
/// engine's card says where else the copy is held (the state of a terminal screen:
/// [`encode_prompt_marks`], [`PromptMarks`]); `on_progress(done, total)` after each batch.
///
/// # Errors
/// A malformed row or a generation failure.
pub fn evaluate<B: Backend>(
    engine: &Engine<B>,
    rows: &[Row],
    batch_size: usize,
    max_tokens: usize,
    copy_bias: &dyn Fn(&str) -> f32,
    named_copy_bias: &dyn Fn(&str) -> Option<f32>,
    on_progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Prediction>> {
    let mut out = Vec::with_capacity(rows.len());
    let domains: Vec<&str> = rows.iter().map(row_domain).collect();
    let (prompts, marks): (Vec<Vec<u32>>, Vec<PromptMarks>) = rows
        .iter()
        .zip(&domains)
        .map(|(r, d)| -> Result<_> {
            let text = prompt_text(r, &engine.template)?;
            let named = named_copy_bias(d).map_or(NamedBias::Off, NamedBias::Nats);
            Ok(encode_prompt_marks(
                &engine.tokenizer,
                engine.card.as_ref(),
                &text,
                d.parse::<Domain>().ok(),
                named,
            )?)
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    // One domain a batch (one copy prior), similar lengths together (low padding).
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (domains[i], prompts[i].len()));
    let mut results: Vec<Option<Prediction>> = vec![None; rows.len()];
    let chunks = order
        .chunk_by(|&a, &b| domains[a] == domains[b])
        .flat_map(|group| group.chunks(batch_size.max(1)));
    for chunk in chunks {
        let params = GenerateParams {
            max_tokens,
            sampling: SamplingParams {
                copy_bias: copy_bias(domains[chunk[0]]),
                ..SamplingParams::greedy()
            },
        };
        let batch: Vec<Vec<u32>> = chunk.iter().map(|&i| prompts[i].clone()).collect();
        let chunk_marks: Vec<Option<PromptMarks>> =
            chunk.iter().map(|&i| Some(marks[i].clone())).collect();
        let generations =
            engine.generate_batch_marked(&batch, &chunk_marks, &params, &mut |_, _| {})?;
        for (&i, g) in chunk.iter().zip(generations) {
            let row = &rows[i];
            let domain = domains[i].to_string();
            let truth = row.target_observation()?;
            let current = row.current_state();
            let form = engine.card.as_ref().map_or(ObservationForm::Full, |c| {
                c.observation_form_for(Some(&domain))
            });
            let written = extract_observation(&g.text);
            // A patch line that finds no place is a malformed patch.
            let (observation, placed) = match form {
                ObservationForm::Full => (written, true),
                ObservationForm::Patch => {
                    let p = apply_patch(&current, &written);
                    (p.state, p.unplaced.is_empty())
                }
            };
            let predicted = score(&domain, &observation, &truth);
            let baseline = score(&domain, &current, &truth);
            let changed_accuracy = changed_accuracy(&current, &observation, &truth);
            let thinking = g.text.split_once("</think>").map_or("", |(t, _)| t);
            let agreement = changed_accuracy
                .map(|_| crate::agreement::agrees(&domain, thinking, &current, &observation));
            results[i] = Some(Prediction {
                row_id: row.id.clone(),
                domain,
                well_formed: is_well_formed(&g.text) && predicted.parses && placed,
                output: g.text,
                observation,
                exact: predicted.exact,
                node_f1: predicted.node_f1,
                baseline_exact: baseline.exact,
                baseline_node_f1: baseline.node_f1,
                changed_accuracy,
                tokens: g.token_ids.len(),
                agreement,
            });
        }
        on_progress(results.iter().filter(|r| r.is_some()).count(), rows.len());
    }
    out.extend(results.into_iter().flatten());
    Ok(out)
}

/// Rows `range` of each domain of `rows` (counted per domain, in file order; the domain is the
/// task's last part, [`row_domain`]), for the teacher-forced diagnostics that score the tune
/// rows (100..150) which `eval fidelity`'s reported rows (the first 100) leave out.
pub fn rows_of_each_domain(rows: Vec<Row>, range: Range<usize>) -> Vec<Row> {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    rows.into_iter()
        .filter(|r| {
            let n = seen.entry(row_domain(r).to_string()).or_insert(0);
            *n += 1;
            range.contains(&(*n - 1))
        })
        .collect()
}

/// Byte ranges of `prompt` (the row rendered) holding the lines of the current state that the
/// target turn's action names ([`agentworld_world::action::named_in_prompt`], in the domain's
/// [`state_format`]). Empty for text domains, or when the action or the state cannot be read.
pub fn named_in_prompt(row: &Row, prompt: &str) -> Vec<Range<usize>> {
    let domain = row_domain(row);
    match (state_format(domain), domain.parse::<Domain>()) {
        (Some(format), Ok(d)) => agentworld_world::action::named_in_prompt(prompt, d, format),
        _ => Vec::new(),
    }
}

/// Per-domain means of [`evaluate`]'s predictions, domains in name order.
pub fn summarise(predictions: &[Prediction]) -> Vec<DomainSummary> {
    let mut domains: Vec<String> = predictions.iter().map(|p| p.domain.clone()).collect();
    domains.sort();
    domains.dedup();
    domains
        .into_iter()
        .map(|domain| {
            let ps: Vec<&Prediction> = predictions.iter().filter(|p| p.domain == domain).collect();
            let n = ps.len() as f64;
            let mean = |f: &dyn Fn(&Prediction) -> f64| ps.iter().map(|p| f(p)).sum::<f64>() / n;
            let changed: Vec<f64> = ps.iter().filter_map(|p| p.changed_accuracy).collect();
            DomainSummary {
                rows: ps.len(),
                well_formed: mean(&|p| f64::from(p.well_formed)),
                exact: mean(&|p| f64::from(p.exact)),
                node_f1: mean(&|p| p.node_f1),
                unit: if state_format(&domain).is_some() {
                    "node"
                } else {
                    "line"
                }
                .into(),
                baseline_exact: mean(&|p| f64::from(p.baseline_exact)),
                baseline_node_f1: mean(&|p| p.baseline_node_f1),
                changed_rows: changed.len(),
                changed_accuracy: if changed.is_empty() {
                    0.0
                } else {
                    changed.iter().sum::<f64>() / changed.len() as f64
                },
                tokens: mean(&|p| p.tokens as f64),
                agreement: {
                    let agreed: Vec<bool> = ps.iter().filter_map(|p| p.agreement).collect();
                    agreed.iter().filter(|&&a| a).count() as f64 / agreed.len().max(1) as f64
                },
                domain,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_scored_apart_from_copied_ones() {
        let current = "$ ls\na.txt\n$ ";
        let truth = "$ ls\na.txt\n$ cat a.txt\nhello\n$ ";
        // The baseline copies the state: none of the three new lines.
        assert_eq!(changed_accuracy(current, current, truth), Some(0.0));
        assert_eq!(changed_accuracy(current, truth, truth), Some(1.0));
        let half = "$ ls\na.txt\n$ cat a.txt\nbye\n$ ";
        let got = changed_accuracy(current, half, truth).unwrap();
        assert!((got - 2.0 / 3.0).abs() < 1e-9, "{got}");
        assert_eq!(changed_accuracy(truth, "anything", truth), None);
        // An Android edit: one node line changes.
        let before = "FrameLayout\n  Switch #wifi checkable";
        let after = "FrameLayout\n  Switch #wifi checkable checked";
        assert_eq!(changed_accuracy(before, after, after), Some(1.0));
        assert_eq!(changed_accuracy(before, before, after), Some(0.0));
    }

    #[test]
    fn terminal_scoring_counts_lines() {
        let truth = "$ ls\na.txt b.txt\n$ ";
        let s = score("terminal", "$ ls\na.txt b.txt\n$ ", truth);
        assert!(s.exact && s.parses && (s.node_f1 - 1.0).abs() < 1e-9);
        let s = score("terminal", "$ ls\n$ ", truth);
        // 2 of 2 predicted lines right, 2 of 3 true lines found: F1 = 0.8.
        assert!(!s.exact && (s.node_f1 - 0.8).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn tree_scoring_uses_the_domain_format_and_flags_unreadable_output() {
        let truth = "FrameLayout [0,0][100,100]\n  EditText #q \"pizza\" focused [0,0][50,10]";
        let s = score("android", truth, truth);
        assert!(s.exact && s.parses && (s.node_f1 - 1.0).abs() < 1e-9);
        let before = "FrameLayout [0,0][100,100]\n  EditText #q \"\" [0,0][50,10]";
        let s = score("android", before, truth);
        assert!(!s.exact && (s.node_f1 - 0.5).abs() < 1e-9, "{s:?}");
        let s = score("android", "", truth);
        assert!(!s.parses && s.node_f1 == 0.0);
        let web = "[1] RootWebArea 'Form'\n\t[2] textbox 'Name', value='Ann'\n\t[3] button 'Send'";
        let s = score("web", web, web);
        assert!(
            s.exact && s.parses && (s.node_f1 - 1.0).abs() < 1e-9,
            "{s:?}"
        );
        let s = score(
            "web",
            "[1] RootWebArea 'Form'\n\t[2] textbox 'Name'\n\t[3] button 'Send'",
            web,
        );
        assert!((s.node_f1 - 2.0 / 3.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn the_named_lines_are_found_in_the_current_state_of_the_prompt() {
        let page = "RootWebArea 'Form', focused\n\t[13] textbox 'Name'\n\t[14] button 'OK'";
        let filled =
            "RootWebArea 'Form', focused\n\t[13] textbox 'Name', value='Ann'\n\t[14] button 'OK'";
        let row = Row::from_turns(
            agentworld_world::Domain::Web,
            "x",
            "sys",
            vec![
                (
                    format!(
                        "### Turn 1\n**Action:**\n```json\nfill('13', 'Ann')\n```\n\n**Current State:**\n{page}"
                    ),
                    format!("**Environment Observation:**\n{filled}"),
                ),
                (
                    "### Turn 2\n**Action:**\n```json\nclick('13')\n```".into(),
                    format!("**Environment Observation:**\n{filled}"),
                ),
            ],
        );
        let prompt = prompt_text(&row, &agentworld_text::ChatTemplate::agentworld()).unwrap();
        let named = named_in_prompt(&row, &prompt);
        let lines: Vec<&str> = named.iter().map(|r| &prompt[r.clone()]).collect();
        // The current state is turn 1's observation (with the value), not its prompt's page.
        assert_eq!(lines, ["\t[13] textbox 'Name', value='Ann'\n"]);
        let terminal = Row::from_turns(
            agentworld_world::Domain::Terminal,
            "t",
            "sys",
            vec![(
                "### Turn 1\n**Action:**\n```json\n[]\n```\n\n**Current State:**\n$ ".into(),
                "**Environment Observation:**\n$ ".into(),
            )],
        );
        let prompt = prompt_text(&terminal, &agentworld_text::ChatTemplate::agentworld()).unwrap();
        assert!(
            named_in_prompt(&terminal, &prompt).is_empty(),
            "no lines named in text domains"
        );
    }

    #[test]
    fn current_state_reads_the_target_turn_or_the_last_observation() {
        let row = Row::from_turns(
            agentworld_world::Domain::Terminal,
            "x",
            "sys",
            vec![
                (
                    "### Turn 1\n**Action:**\n```json\n[]\n```\n\n**Current State:**\n$ ".into(),
                    "**Environment Observation:**\n$ ls\n$ ".into(),
                ),
                (
                    "### Turn 2\n**Action:**\n```json\n[]\n```".into(),
                    "**Environment Observation:**\n$ ".into(),
                ),
            ],
        );
        assert_eq!(row.current_state(), "$ ls\n$ ");
    }
}
