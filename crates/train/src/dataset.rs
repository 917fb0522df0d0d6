//! From AgentWorldBench rows to token sequences with a loss mask, and length-bucketed batches.
//!
//! A row becomes exactly what the model sees at inference: the benchmark's infer-step messages
//! rendered by the chat template with the generation prompt (which ends in `<think>\n`), then
//! the target completion
//! `{thinking}\n</think>\n\n<predicted_observation>\n{observation}\n</predicted_observation><|im_end|>`.
//! The two parts are tokenized separately, exactly as a prompt is tokenized when serving, and
//! the loss covers the completion only.

use agentworld_text::{ChatTemplate, RenderOptions, Tokenizer};
use agentworld_world::Row;
use agentworld_world::diff::ObservationForm;
use rand::Rng;
use rand::seq::SliceRandom;
use rand::{SeedableRng, rngs::StdRng};

use crate::error::{Result, TrainError};

/// One training sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// Prompt and completion ids.
    pub ids: Vec<u32>,
    /// Index of the first completion token in `ids`.
    pub completion_start: usize,
    /// The row's domain (`terminal`, `android`, ...).
    pub domain: String,
    /// The row's id.
    pub row_id: String,
}

/// The prompt text of a row: its infer-step messages through the chat template, generation
/// prompt included.
///
/// # Errors
/// [`TrainError::Data`] for a malformed row, [`TrainError::Text`] if the template fails.
pub fn prompt_text(row: &Row, template: &ChatTemplate) -> Result<String> {
    let messages = row
        .messages()
        .map_err(|e| TrainError::Data(format!("row {}: {e}", row.id)))?;
    Ok(template.render(
        &messages,
        &RenderOptions::new().with_generation_prompt(true),
    )?)
}

/// A row's domain: the last part of its task (`agentworld/web` → `web`).
pub fn row_domain(row: &Row) -> &str {
    row.task.rsplit('/').next().unwrap_or(&row.task)
}

/// The completion a row teaches: thinking, closing tag, the observation block, end of turn.
///
/// # Errors
/// [`TrainError::Data`] for a row without a target.
pub fn completion_text(row: &Row) -> Result<String> {
    completion_text_as(row, ObservationForm::Full)
}

/// [`completion_text`] with the observation written in `form`: for
/// [`ObservationForm::Patch`], the patch from the row's current state
/// ([`Row::current_state`]) to its target ([`agentworld_world::diff::write_patch`]).
///
/// # Errors
/// [`TrainError::Data`] for a row without a target.
pub fn completion_text_as(row: &Row, form: ObservationForm) -> Result<String> {
    let observation = row
        .target_observation()
        .map_err(|e| TrainError::Data(format!("row {}: {e}", row.id)))?;
    let observation = form.written(&row.current_state(), &observation);
    let thinking = row.thinking.clone().unwrap_or_default();
    Ok(format!(
        "{thinking}\n</think>\n\n<predicted_observation>\n{}\n</predicted_observation><|im_end|>",
        observation.trim_end_matches('\n')
    ))
}

/// Tokenizes rows into examples. With `card`, each prompt is read as the model reads it at
/// decoding: for the card's `line_marker_by_domain` domains, the lines the action names are
/// marked ([`agentworld_engine::marked_prompt`]); and each target is written in the domain's
/// observation form (`observation_form_by_domain`: a patch, [`completion_text_as`]).
///
/// # Errors
/// A malformed row, a template or tokenizer failure.
pub fn build_examples(
    rows: &[Row],
    tokenizer: &Tokenizer,
    template: &ChatTemplate,
    card: Option<&agentworld_engine::ModelCard>,
) -> Result<Vec<Example>> {
    rows.iter()
        .map(|row| {
            let domain = row_domain(row).to_string();
            let text = prompt_text(row, template)?;
            let text = agentworld_engine::marked_prompt(card, &text, domain.parse().ok())
                .map_or(text, |m| m.text);
            let mut ids = tokenizer.encode(&text)?;
            let completion_start = ids.len();
            let form = card.map_or(ObservationForm::Full, |c| {
                c.observation_form_for(Some(&domain))
            });
            ids.extend(tokenizer.encode(&completion_text_as(row, form)?)?);
            Ok(Example {
                ids,
                completion_start,
                domain,
                row_id: row.id.clone(),
            })
        })
        .collect()
}

/// Auxiliary copy examples: a random span of learned tokens, `separator`, then the span
/// again, with the loss on the repeat only; about `total_tokens` tokens in all, spans of
/// `min_len..=max_len` tokens drawn uniformly from `pool` (token ids).
///
/// A world model's prediction is mostly the current state copied, so it needs the copying
/// ("induction") circuit: attend to where the current token occurred before and emit what
/// followed it. A tiny model trained on world-model rows alone does not form it within the
/// demo's budget (it writes a remembered screen instead); random spans cannot be predicted any
/// other way, so they teach it directly (Olsson et al., 2022, "In-context learning and
/// induction heads").
pub fn copy_examples(
    total_tokens: usize,
    pool: &[u32],
    separator: u32,
    min_len: usize,
    max_len: usize,
    seed: u64,
) -> Vec<Example> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut tokens = 0;
    let (lo, hi) = (min_len.max(1), max_len.max(min_len.max(1)));
    while tokens < total_tokens && !pool.is_empty() {
        let len = rng.random_range(lo..=hi);
        let span: Vec<u32> = (0..len)
            .map(|_| pool[rng.random_range(0..pool.len())])
            .collect();
        let example = repeated(&span, separator, format!("copy-{}", out.len()));
        tokens += example.ids.len();
        out.push(example);
    }
    out
}

/// Copy examples made of real states: a window of `min_len..=max_len` tokens cut at random
/// from the completion of a random example in `sources`, `separator`, then the window again
/// (loss on the repeat); about `total_tokens` tokens in all.
///
/// Unlike [`copy_examples`]' uniform random spans, whose tokens almost never repeat (so
/// matching the one current token finds the place to copy from), a state is full of repeated
/// tokens (indentation, flags, brackets, digits): finding the place needs the few tokens
/// before it as well, which is what copying a whole screen needs. Short windows first let
/// attention learn that among a few dozen positions instead of a thousand.
pub fn state_copy_examples(
    total_tokens: usize,
    sources: &[Example],
    separator: u32,
    min_len: usize,
    max_len: usize,
    seed: u64,
) -> Vec<Example> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut tokens = 0;
    let (lo, hi) = (min_len.max(1), max_len.max(min_len.max(1)));
    let usable: Vec<&Example> = sources
        .iter()
        .filter(|e| e.ids.len() > e.completion_start + lo)
        .collect();
    while tokens < total_tokens && !usable.is_empty() {
        let e = usable[rng.random_range(0..usable.len())];
        let completion = &e.ids[e.completion_start..];
        let len = rng.random_range(lo..=hi).min(completion.len());
        let start = rng.random_range(0..=completion.len() - len);
        let span = &completion[start..start + len];
        let example = repeated(span, separator, format!("copy-{}-{}", e.row_id, out.len()));
        tokens += example.ids.len();
        out.push(example);
    }
    out
}

/// A copy example: `span`, `separator`, `span` again, the loss on the repeat.
fn repeated(span: &[u32], separator: u32, row_id: String) -> Example {
    let mut ids = Vec::with_capacity(2 * span.len() + 1);
    ids.extend_from_slice(span);
    ids.push(separator);
    ids.extend_from_slice(span);
    Example {
        completion_start: span.len() + 1,
        ids,
        domain: "copy".into(),
        row_id,
    }
}

/// The `k` token ids most frequent in the examples' completions (ties by id), for
/// [`copy_examples`]' pool; all of them when `k` is 0.
pub fn frequent_tokens(examples: &[Example], k: usize) -> Vec<u32> {
    let mut counts: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for e in examples {
        for &t in &e.ids[e.completion_start.min(e.ids.len())..] {
            *counts.entry(t).or_default() += 1;
        }
    }
    let mut ids: Vec<(u32, usize)> = counts.into_iter().collect();
    ids.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let n = if k == 0 { ids.len() } else { k.min(ids.len()) };
    ids.into_iter().take(n).map(|(t, _)| t).collect()
}

/// Groups example indices into batches of similar length whose padded size
/// (`rows * longest`) stays within `tokens_per_batch`, in a seeded random order.
pub fn batches(examples: &[Example], tokens_per_batch: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..examples.len()).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    order.shuffle(&mut rng);
    order.sort_by_key(|&i| examples[i].ids.len());
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        let longest = examples[i].ids.len();
        if !current.is_empty() && (current.len() + 1) * longest > tokens_per_batch {
            out.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.shuffle(&mut rng);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(len: usize) -> Example {
        Example {
            ids: vec![1; len],
            completion_start: 1,
            domain: "terminal".into(),
            row_id: String::new(),
        }
    }

    #[test]
    fn batches_respect_the_token_budget_and_cover_everything_once() {
        let examples: Vec<Example> = [10, 500, 20, 300, 300, 40, 1000, 15]
            .iter()
            .map(|&l| ex(l))
            .collect();
        let b = batches(&examples, 1000, 3);
        let mut seen: Vec<usize> = b.iter().flatten().copied().collect();
        seen.sort();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
        for batch in &b {
            let longest = batch.iter().map(|&i| examples[i].ids.len()).max().unwrap();
            assert!(
                batch.len() == 1 || batch.len() * longest <= 1000,
                "{batch:?}"
            );
        }
        assert_eq!(b, batches(&examples, 1000, 3), "same seed, same batches");
    }

    #[test]
    fn the_generation_prompt_ends_where_the_completion_begins() {
        let row = Row::from_turns(
            agentworld_world::Domain::Terminal,
            "t-1",
            "You are a Terminal World Model.",
            vec![(
                "### Turn 1\n**Action:**\n```json\n[]\n```".into(),
                "**Environment Observation:**\n$ ".into(),
            )],
        );
        let mut row = row;
        row.thinking = Some("Nothing runs.".into());
        let template = ChatTemplate::agentworld();
        let prompt = prompt_text(&row, &template).unwrap();
        assert!(
            prompt.ends_with("<|im_start|>assistant\n<think>\n"),
            "{prompt:?}"
        );
        assert_eq!(
            completion_text(&row).unwrap(),
            "Nothing runs.\n</think>\n\n<predicted_observation>\n$ \n</predicted_observation><|im_end|>"
        );
    }

    #[test]
    fn a_card_with_line_markers_marks_the_named_lines_of_gui_prompts_only() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../public/models/agentworld-demo");
        let tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        let rows = agentworld_world::row::read_jsonl_file(dir.join("heldout.jsonl")).unwrap();
        let rows: Vec<Row> = ["web", "os", "terminal"]
            .iter()
            .flat_map(|d| rows.iter().filter(|r| r.task == *d).take(20).cloned())
            .collect();
        let card = crate::recipe::reading_card(&crate::recipe::DemoRecipe {
            mark_named_lines: vec!["web".into(), "os".into()],
            ..Default::default()
        })
        .unwrap();
        let template = ChatTemplate::agentworld();
        let plain = build_examples(&rows, &tokenizer, &template, None).unwrap();
        let marked = build_examples(&rows, &tokenizer, &template, card.as_ref()).unwrap();
        let marker = tokenizer.encode(crate::recipe::LINE_MARKER).unwrap()[0];
        let mut marked_rows = std::collections::BTreeMap::new();
        for (p, m) in plain.iter().zip(&marked) {
            let prompt = &m.ids[..m.completion_start];
            let markers = prompt.iter().filter(|&&t| t == marker).count();
            *marked_rows.entry(m.domain.as_str()).or_insert(0) += usize::from(markers > 0);
            // The marker is the only change, and never in the completion.
            let unmarked: Vec<u32> = prompt.iter().copied().filter(|&t| t != marker).collect();
            assert_eq!(unmarked, p.ids[..p.completion_start], "{}", m.row_id);
            assert_eq!(m.ids[m.completion_start..], p.ids[p.completion_start..]);
        }
        assert_eq!(marked_rows.get("terminal"), Some(&0));
        assert!(
            marked_rows["web"] >= 10 && marked_rows["os"] >= 10,
            "{marked_rows:?}"
        );
    }

    #[test]
    fn a_card_that_writes_patches_teaches_the_patch_of_its_domains_only() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../public/models/agentworld-demo");
        let tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        let rows = agentworld_world::row::read_jsonl_file(dir.join("heldout.jsonl")).unwrap();
        let rows: Vec<Row> = ["web", "android"]
            .iter()
            .flat_map(|d| rows.iter().filter(|r| r.task == *d).take(30).cloned())
            .collect();
        let card = crate::recipe::reading_card(&crate::recipe::DemoRecipe {
            patch_observations: vec!["web".into()],
            ..Default::default()
        })
        .unwrap();
        let template = ChatTemplate::agentworld();
        let whole = build_examples(&rows, &tokenizer, &template, None).unwrap();
        let patched = build_examples(&rows, &tokenizer, &template, card.as_ref()).unwrap();
        let (mut shorter, mut unchanged) = (0, 0);
        for ((row, w), p) in rows.iter().zip(&whole).zip(&patched) {
            // The prompt is the same; only the target is written another way.
            assert_eq!(w.ids[..w.completion_start], p.ids[..p.completion_start]);
            let completion = tokenizer
                .decode(&p.ids[p.completion_start..], false)
                .unwrap();
            if row.task == "android" {
                assert_eq!(w.ids, p.ids, "{}", row.id);
                continue;
            }
            // What the model is taught to write gives the row's next state back.
            let written = agentworld_text::observation::extract_observation(&completion);
            let next = agentworld_world::diff::apply_patch(&row.current_state(), &written).state;
            assert_eq!(
                next.lines().collect::<Vec<_>>(),
                row.target_observation()
                    .unwrap()
                    .lines()
                    .collect::<Vec<_>>(),
                "{}",
                row.id
            );
            shorter += usize::from(p.ids.len() < w.ids.len());
            unchanged += usize::from(written == agentworld_world::diff::NO_CHANGE);
        }
        assert!(shorter >= 20 && unchanged >= 1, "{shorter} {unchanged}");
    }

    #[test]
    fn state_copies_repeat_a_window_of_a_completion() {
        let sources = vec![Example {
            ids: (0..100).collect(),
            completion_start: 40,
            domain: "web".into(),
            row_id: "w".into(),
        }];
        let ex = state_copy_examples(2000, &sources, 999, 5, 20, 1);
        assert!(!ex.is_empty());
        for e in &ex {
            let n = e.completion_start - 1;
            assert!((5..=20).contains(&n));
            assert_eq!(e.ids[n], 999);
            assert_eq!(e.ids[..n], e.ids[n + 1..]);
            // A contiguous window of the completion (ids 40..100).
            assert!(e.ids[..n].windows(2).all(|w| w[1] == w[0] + 1) && e.ids[0] >= 40);
        }
    }

    #[test]
    fn copy_examples_repeat_their_span_after_the_separator() {
        let pool: Vec<u32> = (0..100).collect();
        let ex = copy_examples(5000, &pool, 999, 10, 40, 3);
        let total: usize = ex.iter().map(|e| e.ids.len()).sum();
        assert!((5000..5000 + 81).contains(&total), "{total}");
        for e in &ex {
            let n = e.completion_start - 1;
            assert!((10..=40).contains(&n));
            assert_eq!(e.ids.len(), 2 * n + 1);
            assert_eq!(e.ids[n], 999);
            assert_eq!(e.ids[..n], e.ids[n + 1..]);
            assert!(e.ids[..n].iter().all(|&t| t < 100));
        }
        assert_eq!(ex, copy_examples(5000, &pool, 999, 10, 40, 3));
        assert!(copy_examples(5000, &[], 999, 10, 40, 3).is_empty());
    }
}
