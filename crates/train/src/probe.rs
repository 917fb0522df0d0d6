//! Teacher-forced accuracy on held-out examples: a cheap look at what a model has learned,
//! taken during training.
//!
//! For each completion token the model sees the true prefix and its top logit is compared with
//! the true next token (one forward pass per batch, no generation). Tokens are split into
//! *copied* ones, whose last [`COPY_CONTEXT`] tokens (the token and the ones before it) also
//! occur together in the prompt, and *new* ones. A world model's prediction is mostly the
//! current state again, so copied-token accuracy says whether the copying ("induction")
//! circuit has formed long before greedy outputs come out right: an observation of `n` tokens
//! comes out whole only when per-token accuracy is near `1 - 1/n`.

use std::collections::{BTreeMap, HashSet};

use agentworld_model::{Qwen35Moe, TokenBatch};
use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};
use serde::Serialize;

use crate::dataset::Example;
use crate::error::Result;

/// Tokens (the target and the ones before it) that must occur together in the prompt for a
/// completion token to count as copied.
pub const COPY_CONTEXT: usize = 4;

/// Teacher-forced figures of one domain.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TokenAccuracy {
    /// Domain ([`Example::domain`]).
    pub domain: String,
    /// Completion tokens scored.
    pub tokens: usize,
    /// Of those, predicted right (top logit).
    pub correct: usize,
    /// Completion tokens that continue a span of the prompt (see the module docs).
    pub copied: usize,
    /// Of those, predicted right.
    pub copied_correct: usize,
    /// Sum of the negative log-likelihood of every completion token, in nats.
    pub nll: f64,
}

impl TokenAccuracy {
    /// Share of completion tokens predicted right.
    pub fn accuracy(&self) -> f64 {
        self.correct as f64 / self.tokens.max(1) as f64
    }

    /// Share of copied tokens predicted right.
    pub fn copy_accuracy(&self) -> f64 {
        self.copied_correct as f64 / self.copied.max(1) as f64
    }

    /// Share of new (not copied) tokens predicted right.
    pub fn new_accuracy(&self) -> f64 {
        (self.correct - self.copied_correct) as f64 / (self.tokens - self.copied).max(1) as f64
    }

    /// Mean loss per completion token, in nats.
    pub fn loss(&self) -> f64 {
        self.nll / self.tokens.max(1) as f64
    }
}

/// The first completion token the probe scores: `completion_start`, except that the first
/// token of a sequence (with no prompt) is never scored, nothing comes before it.
pub fn first_scored(e: &Example) -> usize {
    e.completion_start.max(1)
}

/// Which completion positions of `e` are copied (see the module docs): entry `k` is for the
/// token at `e.ids[first_scored(e) + k]`.
pub fn copied_positions(e: &Example) -> Vec<bool> {
    let prompt = &e.ids[..e.completion_start.min(e.ids.len())];
    let grams: HashSet<&[u32]> = prompt.windows(COPY_CONTEXT).collect();
    (first_scored(e)..e.ids.len())
        .map(|t| t + 1 >= COPY_CONTEXT && grams.contains(&e.ids[t + 1 - COPY_CONTEXT..=t]))
        .collect()
}

/// One completion token scored teacher-forced ([`teacher_forced_tokens`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenScore {
    /// The token of the top logit.
    pub top: u32,
    /// The top logit was the true token.
    pub right: bool,
    /// Log-probability of the true token, in nats.
    pub log_prob: f64,
}

/// Teacher-forced accuracy of `model` on `examples`, per domain (in name order); batches of
/// similar length hold at most `tokens_per_batch` padded tokens.
///
/// # Errors
/// An example the model rejects (longer than its context).
pub fn teacher_forced<B: Backend>(
    model: &Qwen35Moe<B>,
    examples: &[Example],
    tokens_per_batch: usize,
) -> Result<Vec<TokenAccuracy>> {
    let scores = teacher_forced_tokens(model, examples, tokens_per_batch)?;
    let mut by_domain: BTreeMap<String, TokenAccuracy> = BTreeMap::new();
    for (e, scores) in examples.iter().zip(&scores) {
        let acc = by_domain
            .entry(e.domain.clone())
            .or_insert_with(|| TokenAccuracy {
                domain: e.domain.clone(),
                ..Default::default()
            });
        for (c, s) in copied_positions(e).into_iter().zip(scores) {
            acc.tokens += 1;
            acc.correct += usize::from(s.right);
            acc.copied += usize::from(c);
            acc.copied_correct += usize::from(c && s.right);
            acc.nll -= s.log_prob;
        }
    }
    Ok(by_domain.into_values().collect())
}

/// Every completion token of every example scored teacher-forced: entry `i` holds example
/// `i`'s completion tokens in order (as [`copied_positions`] lists them).
///
/// # Errors
/// As [`teacher_forced`].
pub fn teacher_forced_tokens<B: Backend>(
    model: &Qwen35Moe<B>,
    examples: &[Example],
    tokens_per_batch: usize,
) -> Result<Vec<Vec<TokenScore>>> {
    let device = model.embed_tokens.weight.device();
    let mut out = vec![Vec::new(); examples.len()];
    for batch in crate::dataset::batches(examples, tokens_per_batch, 0) {
        let rows: Vec<&Example> = batch.iter().map(|&i| &examples[i]).collect();
        let len = rows.iter().map(|e| e.ids.len()).max().unwrap_or(1) - 1;
        let mut ids = Vec::with_capacity(rows.len());
        let (mut picked, mut targets) = (Vec::new(), Vec::new());
        for (r, e) in rows.iter().enumerate() {
            let n = e.ids.len() - 1;
            let mut row = e.ids[..n].to_vec();
            row.resize(len, 0);
            ids.push(row);
            // Position `t` predicts `ids[t + 1]`.
            for t in first_scored(e) - 1..n {
                picked.push((r * len + t) as i64);
                targets.push(e.ids[t + 1] as i64);
            }
        }
        if picked.is_empty() {
            continue;
        }
        let hidden = model.forward_hidden(&TokenBatch { ids, valid: None }, None)?;
        let [b, l, h] = hidden.dims();
        let count = picked.len();
        let index = Tensor::<B, 1, Int>::from_data(TensorData::new(picked, [count]), &device);
        let logits = model.logits(hidden.reshape([b * l, h]).select(0, index).unsqueeze());
        let log_probs = burn::tensor::activation::log_softmax(logits, 2); // [1, count, vocab]
        let best = log_probs.clone().argmax(2).into_data().convert::<i64>();
        let best = best.to_vec::<i64>().unwrap_or_default();
        let target_tensor = Tensor::<B, 3, Int>::from_data(
            TensorData::new(targets.clone(), [1, count, 1]),
            &device,
        );
        let picked_log_probs = log_probs
            .gather(2, target_tensor)
            .into_data()
            .convert::<f64>();
        let picked_log_probs = picked_log_probs.to_vec::<f64>().unwrap_or_default();
        let mut k = 0;
        for (&i, e) in batch.iter().zip(&rows) {
            let n = e.ids.len() - 1;
            for _ in first_scored(e) - 1..n {
                out[i].push(TokenScore {
                    top: best.get(k).map_or(0, |&t| t as u32),
                    right: best.get(k) == targets.get(k),
                    log_prob: picked_log_probs.get(k).copied().unwrap_or(0.0),
                });
                k += 1;
            }
        }
    }
    Ok(out)
}

/// Orders of the n-gram copying rules [`copy_ceiling`] scores.
pub const CEILING_ORDERS: [usize; 3] = [1, 3, 8];

/// Caps on the suffix [`copy_ceiling`]'s longest-match rule compares, in tokens.
pub const LONGEST_MATCH_CAPS: [usize; 3] = [4, 8, 16];

/// How far copying rules, with no model, get on the copied tokens of one domain
/// ([`copy_ceiling`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CopyCeiling {
    /// Domain ([`Example::domain`]).
    pub domain: String,
    /// Copied completion tokens ([`copied_positions`]).
    pub copied: usize,
    /// Per order `n` of [`CEILING_ORDERS`], the copied tokens the `n`-gram rule predicts.
    pub ngram_correct: Vec<usize>,
    /// Per cap of [`LONGEST_MATCH_CAPS`], the copied tokens the longest-match rule predicts.
    pub longest_correct: Vec<usize>,
}

/// Teacher-forced accuracy of two copying rules on the copied tokens of `examples`, per domain
/// (in name order): what an induction circuit of a given reach would score. Not an upper
/// bound: the rules look only in the prompt and take the latest match on a tie, where a model
/// may do better.
///
/// - the `n`-gram rule (an induction head keyed on the last `n` tokens, Olsson et al., 2022)
///   finds the latest place in the prompt where the `n` tokens before the target occur and
///   predicts the token after it (nothing when they do not occur);
/// - the longest-match rule predicts the token after the prompt position whose preceding
///   tokens agree longest with those before the target (compared up to a cap of
///   [`LONGEST_MATCH_CAPS`]; the latest such position on a tie): a copy that keeps its place
///   in the source, as far as the cap lets it tell places apart.
///
/// A state copied into the completion repeats short n-grams many times over (`[`, `bounds`,
/// a run of digits), so an n-gram rule jumps to the wrong line where the longest match does
/// not.
pub fn copy_ceiling(examples: &[Example]) -> Vec<CopyCeiling> {
    let mut by_domain: BTreeMap<String, CopyCeiling> = BTreeMap::new();
    for e in examples {
        let c = by_domain
            .entry(e.domain.clone())
            .or_insert_with(|| CopyCeiling {
                domain: e.domain.clone(),
                ngram_correct: vec![0; CEILING_ORDERS.len()],
                longest_correct: vec![0; LONGEST_MATCH_CAPS.len()],
                ..Default::default()
            });
        let p = e.completion_start.min(e.ids.len());
        let ids = &e.ids;
        for (k, copied) in copied_positions(e).into_iter().enumerate() {
            if !copied {
                continue;
            }
            let t = first_scored(e) + k;
            c.copied += 1;
            for (slot, &n) in CEILING_ORDERS.iter().enumerate() {
                if t < n {
                    continue;
                }
                let key = &ids[t - n..t];
                let hit = (n..p).rev().find(|&j| ids[j - n..j] == *key);
                if hit.is_some_and(|j| ids[j] == ids[t]) {
                    c.ngram_correct[slot] += 1;
                }
            }
            let widest = LONGEST_MATCH_CAPS.iter().copied().max().unwrap_or(0);
            let lengths = match_lengths(ids, p, t, widest);
            for (slot, &cap) in LONGEST_MATCH_CAPS.iter().enumerate() {
                if longest_match(&lengths, cap).is_some_and(|j| ids[j] == ids[t]) {
                    c.longest_correct[slot] += 1;
                }
            }
        }
    }
    by_domain.into_values().collect()
}

/// For each prompt position `j < p`, how many tokens before it agree with those before `t`
/// (up to `widest`).
fn match_lengths(ids: &[u32], p: usize, t: usize, widest: usize) -> Vec<usize> {
    (0..p)
        .map(|j| {
            (0..widest.min(j).min(t))
                .take_while(|&i| ids[j - 1 - i] == ids[t - 1 - i])
                .count()
        })
        .collect()
}

/// The longest-match rule's pick: the position with the longest match compared up to `cap`
/// tokens, the latest on a tie; `None` when nothing matches.
fn longest_match(lengths: &[usize], cap: usize) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (j, &m) in lengths.iter().enumerate() {
        let m = m.min(cap);
        if m > 0 && best.is_none_or(|(bm, _)| m >= bm) {
            best = Some((m, j));
        }
    }
    best.map(|(_, j)| j)
}

/// For each completion token of `e` the probe counts as copied, the fewest tokens of context
/// (1 to `max_context`) with which the longest-match rule of [`copy_ceiling`] predicts it;
/// `None` for tokens not copied or not predicted even with `max_context`. Entry `k` is for
/// the token at `e.ids[first_scored(e) + k]`: how hard each copied token is to place.
pub fn context_needed(e: &Example, max_context: usize) -> Vec<Option<usize>> {
    let p = e.completion_start.min(e.ids.len());
    let ids = &e.ids;
    copied_positions(e)
        .into_iter()
        .enumerate()
        .map(|(k, copied)| {
            if !copied {
                return None;
            }
            let t = first_scored(e) + k;
            let lengths = match_lengths(ids, p, t, max_context);
            (1..=max_context)
                .find(|&cap| longest_match(&lengths, cap).is_some_and(|j| ids[j] == ids[t]))
        })
        .collect()
}

/// One line per domain: `domain acc 0.912 copied 0.950 (812) new 0.410 loss 0.31`.
pub fn format_accuracy(figures: &[TokenAccuracy]) -> String {
    figures
        .iter()
        .map(|a| {
            format!(
                "{} acc {:.3} copied {:.3} ({}) new {:.3} loss {:.3}",
                a.domain,
                a.accuracy(),
                a.copy_accuracy(),
                a.copied,
                a.new_accuracy(),
                a.loss()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One line of generated figures per domain: well-formed share, node (line) F1 and, beside
/// it, the "state unchanged" baseline's F1, with the rows generated.
pub fn format_generated(summary: &[crate::eval::DomainSummary]) -> String {
    summary
        .iter()
        .map(|d| {
            format!(
                "{} well-formed {:.2} {} F1 {:.3} (baseline {:.3}, {} rows)",
                d.domain, d.well_formed, d.unit, d.node_f1, d.baseline_node_f1, d.rows
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_model::Qwen35MoeConfig;

    #[test]
    fn every_completion_token_is_scored_once_per_domain() {
        let j = serde_json::json!({
            "vocab_size": 16, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "linear_num_key_heads": 1,
            "linear_num_value_heads": 1, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
            "num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 8,
            "shared_expert_intermediate_size": 8, "full_attention_interval": 2,
            "tie_word_embeddings": true
        });
        let config = Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap();
        let model = Qwen35Moe::<burn::backend::Flex>::init(&config, &Default::default());
        let ex = |domain: &str, ids: Vec<u32>, start| Example {
            ids,
            completion_start: start,
            domain: domain.into(),
            row_id: String::new(),
        };
        let examples = vec![
            ex("web", vec![1, 2, 3, 4, 5, 1, 2, 3, 4], 5),
            ex("os", vec![7, 8, 9, 10, 11, 12], 2),
            ex("web", vec![3, 3, 3, 3, 3, 3, 3], 4),
        ];
        // Per-token scores line up with the copied flags, a sequence without prompt included.
        let mut with_empty_prompt = examples.clone();
        with_empty_prompt.push(ex("os", vec![4, 5, 6], 0));
        let scores = teacher_forced_tokens(&model, &with_empty_prompt, 64).unwrap();
        for (e, s) in with_empty_prompt.iter().zip(&scores) {
            assert_eq!(s.len(), copied_positions(e).len(), "{:?}", e.ids);
            assert_eq!(s.len(), context_needed(e, 4).len());
        }
        let figures = teacher_forced(&model, &examples, 64).unwrap();
        let names: Vec<&str> = figures.iter().map(|f| f.domain.as_str()).collect();
        assert_eq!(names, ["os", "web"]);
        assert_eq!((figures[0].tokens, figures[1].tokens), (4, 4 + 3));
        // web: the last token of the first example ends "1 2 3 4", as in its prompt, and every
        // token of the third ends "3 3 3 3".
        assert_eq!(figures[1].copied, 1 + 3);
        assert_eq!(figures[0].copied, 0);
        for f in &figures {
            assert!(f.correct <= f.tokens && f.copied_correct <= f.copied.min(f.correct));
            assert!(f.loss() > 0.0 && f.loss().is_finite());
        }
        // Other batches (one example each): the same counts, the same loss up to rounding.
        let alone = teacher_forced(&model, &examples, 16).unwrap();
        for (a, b) in figures.iter().zip(&alone) {
            assert_eq!(
                (a.tokens, a.correct, a.copied),
                (b.tokens, b.correct, b.copied)
            );
            assert!((a.nll - b.nll).abs() < 1e-4, "{} vs {}", a.nll, b.nll);
        }
    }

    #[test]
    fn longest_match_keeps_its_place_where_short_ngrams_jump() {
        // prompt: 5 1 2 6 | 7 1 2 8 | 9 (two lines sharing "1 2"); completion: the first line.
        let e = Example {
            ids: vec![5, 1, 2, 6, 7, 1, 2, 8, 9, 5, 1, 2, 6],
            completion_start: 9,
            domain: "t".into(),
            row_id: String::new(),
        };
        // Only the last token ("5 1 2 6") is copied by the probe's rule.
        assert_eq!(copied_positions(&e), vec![false, false, false, true]);
        let c = &copy_ceiling(std::slice::from_ref(&e))[0];
        assert_eq!(c.copied, 1);
        // After "... 1 2", the latest "2" and "1 2" of the prompt are followed by 8: wrong;
        // "5 1 2" (order 3) and the longest match point at the first line: right; order 8
        // finds nothing.
        assert_eq!(c.ngram_correct, vec![0, 1, 0]);
        assert_eq!(c.longest_correct, vec![1, 1, 1]);
        // It takes 3 tokens of context ("5 1 2") to place the copied token.
        assert_eq!(context_needed(&e, 16), vec![None, None, None, Some(3)]);
    }

    #[test]
    fn copied_tokens_continue_a_span_of_the_prompt() {
        let e = Example {
            // prompt: 1 2 3 4 5 | completion: 2 3 4 5 9
            ids: vec![1, 2, 3, 4, 5, 2, 3, 4, 5, 9],
            completion_start: 5,
            domain: "t".into(),
            row_id: String::new(),
        };
        // Windows ending at each completion token: 3 4 5 2, 4 5 2 3, 5 2 3 4, 2 3 4 5 (in the
        // prompt), 3 4 5 9.
        assert_eq!(copied_positions(&e), vec![false, false, false, true, false]);
    }
}
