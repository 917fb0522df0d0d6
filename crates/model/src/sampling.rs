//! Next-token sampling from logits: greedy, temperature, top-k, top-p, seeded.
//!
//! The order follows transformers' `generate` logits processors and vLLM's sampler:
//! temperature, then top-k, then top-p (nucleus), then a draw from the renormalised
//! distribution. A temperature of 0 means greedy (argmax, lowest id on ties).
//!
//! An optional copy prior ([`SamplingParams::copy_bias`]) comes first: a world model's next
//! state is mostly its current state copied, so the token that continues the span of the
//! prompt the output is copying gets a logit bonus (the continuation is found as prompt-lookup
//! decoding finds its drafts, Saxena 2023, "Prompt Lookup Decoding"; here it changes the choice
//! instead of only speeding it up). A model sure of an edit still outvotes it.
//!
//! An optional thinking budget ([`Sampler::with_thinking_budget`]) ends the reasoning after a
//! number of tokens by picking its close token (`</think>`) and what follows it (the
//! observation's opening tag), as "budget forcing" does (s1, Muennighoff et al. 2025) and as
//! Qwen3's thinking budget is applied in practice: a small model whose reasoning falls into a
//! loop then still writes its observation.
//!
//! An optional loop guard ([`LoopGuard`]) keeps the output from repeating a span of `n` tokens
//! more often than the prompt has it: transformers' `no_repeat_ngram_size`, except that the
//! prompt's n-grams may be repeated as often as the prompt holds them (a world model copies
//! its state, so banning every n-gram of the prompt would ban the copy itself).

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Sampling settings, with OpenAI-style meanings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplingParams {
    /// Softmax temperature; `0.0` is greedy.
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens; `0` keeps all.
    pub top_k: usize,
    /// Keep the smallest set of tokens whose probability reaches `top_p`; `1.0` keeps all.
    pub top_p: f32,
    /// Seed of the random generator.
    pub seed: u64,
    /// Logit bonus (nats) for the token that continues the longest span of the prompt the
    /// generated text ends with ([`CopyPrior`]); `0.0` is off. Needs the prompt
    /// ([`Sampler::with_copy_prior`]); the logits are then read back even when greedy.
    pub copy_bias: f32,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            seed: 0,
            copy_bias: 0.0,
        }
    }
}

impl SamplingParams {
    /// Greedy decoding.
    pub fn greedy() -> Self {
        Self::default()
    }
}

/// A seeded sampler; one per sequence so that each sequence's draws are reproducible.
#[derive(Debug, Clone)]
pub struct Sampler {
    params: SamplingParams,
    rng: StdRng,
    copy: Option<CopyPrior>,
    /// The thinking budget, while the reasoning is open.
    budget: Option<ThinkingBudget>,
    loop_guard: Option<LoopGuard>,
    /// [`Sampler::with_end_after`]: (gate, tag, end, the gate passed, the tag picked).
    end_after: Option<EndAfter>,
}

/// What [`Sampler::with_end_after`] keeps.
#[derive(Debug, Clone, Copy)]
struct EndAfter {
    gate: Option<u32>,
    tag: u32,
    end: u32,
    armed: bool,
}

/// Where a loop starts, bans the token that would repeat it (see the module docs): a token is
/// banned when it completes an `n`-token span that the output already holds as often as the
/// prompt does. A small model that has written its new lines tends to write them again, and
/// again, to the token limit (held-out terminal screens: a command and its output repeated);
/// with the repeat banned it takes its next choice, which is most often the end of the block.
#[derive(Debug, Clone)]
pub struct LoopGuard {
    n: usize,
    /// Occurrences of each `n`-gram of the prompt.
    in_prompt: HashMap<Vec<u32>, usize>,
    /// Occurrences of each `n`-gram of the output so far.
    in_output: HashMap<Vec<u32>, usize>,
    /// Per `n - 1`-gram of the output, the tokens that have followed it.
    followers: HashMap<Vec<u32>, Vec<u32>>,
    picked: Vec<u32>,
    waiting_for: Option<u32>,
}

impl LoopGuard {
    /// A guard on spans of `n` tokens (at least 2) over `prompt` (token ids).
    pub fn new(prompt: &[u32], n: usize) -> Self {
        let n = n.max(2);
        let mut in_prompt = HashMap::new();
        for gram in prompt.windows(n) {
            *in_prompt.entry(gram.to_vec()).or_insert(0) += 1;
        }
        Self {
            n,
            in_prompt,
            in_output: HashMap::new(),
            followers: HashMap::new(),
            picked: Vec::new(),
            waiting_for: None,
        }
    }

    /// The guard counts nothing until `token` is picked (the end of the reasoning, `</think>`:
    /// the reasoning is the model's own, and a loop there is the thinking budget's to end).
    pub fn after(mut self, token: u32) -> Self {
        self.waiting_for = Some(token);
        self
    }

    /// The tokens that would repeat a span too often if picked next.
    pub fn banned(&self) -> Vec<u32> {
        if self.waiting_for.is_some() || self.picked.len() + 1 < self.n {
            return Vec::new();
        }
        let prefix = &self.picked[self.picked.len() + 1 - self.n..];
        let Some(followers) = self.followers.get(prefix) else {
            return Vec::new();
        };
        let mut gram = prefix.to_vec();
        gram.push(0);
        followers
            .iter()
            .copied()
            .filter(|&t| {
                gram[self.n - 1] = t;
                let written = self.in_output.get(&gram).copied().unwrap_or(0);
                written >= self.in_prompt.get(&gram).copied().unwrap_or(0)
            })
            .collect()
    }

    /// Records a picked token.
    pub fn push(&mut self, token: u32) {
        if let Some(gate) = self.waiting_for {
            if token == gate {
                self.waiting_for = None;
            }
            return;
        }
        self.picked.push(token);
        if self.picked.len() >= self.n {
            let gram = &self.picked[self.picked.len() - self.n..];
            *self.in_output.entry(gram.to_vec()).or_insert(0) += 1;
            let followers = self
                .followers
                .entry(gram[..self.n - 1].to_vec())
                .or_default();
            if !followers.contains(&token) {
                followers.push(token);
            }
        }
    }
}

/// What [`Sampler::with_thinking_budget`] keeps: the tokens forced when the budget runs out
/// (the first closes the reasoning), how many more the reasoning may take, and how many of
/// the forced ones are out.
#[derive(Debug, Clone)]
struct ThinkingBudget {
    forced: Vec<u32>,
    left: usize,
    next: usize,
}

/// The copy prior of [`SamplingParams::copy_bias`]: where in the prompt the output is copying
/// from, and so which token would continue the copy.
///
/// A pointer follows the copy: while each picked token is the prompt's next one, it moves one
/// on. When a picked token breaks the copy (an edit), it is placed again at the end of the
/// longest suffix of the picked tokens (at least [`Self::MIN_MATCH`], at most
/// [`Self::MAX_MATCH`] tokens) found in the prompt at a position not copied yet; ties go to the
/// nearest position after the last one the pointer held (the copy was lost there: placing it
/// at the latest match instead cut held-out Android trees short, 84% well-formed against
/// 87%), else, before any, to the latest (the current state comes last in a world-model
/// prompt). Never placing it on a copied position keeps a slip from turning into a
/// loop over the same lines.
///
/// Where the copied span ends its turn in the prompt (the next prompt token is a stop token:
/// the current state is the last thing in its message), the prior can ask for the tokens that
/// close the output's block instead ([`Self::closed_by`]), once: when they are picked the
/// prior is off for the rest of the output.
#[derive(Debug, Clone)]
pub struct CopyPrior {
    prompt: Vec<u32>,
    picked: Vec<u32>,
    copied: Vec<bool>,
    at: Option<usize>,
    /// The last position the pointer held: where a lost copy most likely resumes.
    last: Option<usize>,
    waiting_for: Option<u32>,
    /// Favoured, in order, where the copied span ends its turn ([`Self::closed_by`]).
    close: Vec<u32>,
    /// How many of `close` have been picked in a row.
    closing: usize,
    /// [`Self::outright_below`]: below this probability of its own top token, the model is
    /// not weighed against the copy (0: always weighed).
    outright_below: f32,
}

impl CopyPrior {
    /// Shortest suffix that counts as copying.
    pub const MIN_MATCH: usize = 2;
    /// Longest suffix compared.
    pub const MAX_MATCH: usize = 32;
    /// Stands in the prompt for a token of `never`; no picked token equals it.
    const NONE: u32 = u32::MAX;

    /// A prior over `prompt` (token ids), with nothing picked yet. Tokens in `never` (the
    /// stop tokens) are neither matched nor favoured: the end of the copied state is followed
    /// in the prompt by the end of the turn, which must not end the output.
    pub fn new(prompt: &[u32], never: &[u32]) -> Self {
        Self {
            prompt: prompt
                .iter()
                .map(|t| if never.contains(t) { Self::NONE } else { *t })
                .collect(),
            picked: Vec::new(),
            copied: vec![false; prompt.len()],
            at: None,
            last: None,
            waiting_for: None,
            close: Vec::new(),
            closing: 0,
            outright_below: 0.0,
        }
    }

    /// The prior stays off until `token` is picked (the end of the reasoning, `</think>`: a
    /// model's thinking quotes the state but is not a copy of it).
    pub fn after(mut self, token: u32) -> Self {
        self.waiting_for = Some(token);
        self
    }

    /// Where the copied span is followed in the prompt by a stop token (the end of the turn
    /// that holds the state), the prior favours `close` one token after the other
    /// (`</predicted_observation>`, then the end of the turn, which is also a stop token)
    /// instead of nothing: a copied state then ends its block where the state ended, rather
    /// than running on into a repeat of its last lines, and nothing is written after the
    /// block. Once all of `close` is picked the prior is off; a token off the sequence drops
    /// it and the copy goes on as usual. `close` may hold stop tokens.
    pub fn closed_by(mut self, close: &[u32]) -> Self {
        self.close = close.to_vec();
        self
    }

    /// Where the model's own top token has a probability under `confidence` (softmax of the
    /// raw logits) and is not the continuation, the continuation is picked outright instead
    /// of being weighed against the model with [`SamplingParams::copy_bias`]; at or above it,
    /// the bonus decides as usual. The state's last token and, where the copy reaches the end
    /// of its turn, the close ([`Self::closed_by`]) are always taken outright. A plain bonus cannot tell an edit from a slip: a bonus
    /// large enough to hold a 40-line copy together (15 nats) also overrides the edits the
    /// model is sure of, and the slips that broke copies came where the model was unsure
    /// and gave the copy's token almost nothing. Teacher-forced on held-out rows 100–149 of
    /// the demo model (`crates/train/examples/edit_margin.rs`), a 4-nat bonus gated at 0.5
    /// broke 0 / 10 / 6 of the Android / OS / Web copied tokens and wrote 134 / 85 / 90 of
    /// their edits, where 15 nats alone broke none and wrote 32 / 10 / 17. 0 (the default) or
    /// less: always weighed. Not a number: 0.
    pub fn outright_below(mut self, confidence: f32) -> Self {
        self.outright_below = if confidence.is_nan() { 0.0 } else { confidence };
        self
    }

    /// Records a picked token and moves the pointer.
    pub fn push(&mut self, token: u32) {
        if let Some(gate) = self.waiting_for {
            if token == gate {
                self.waiting_for = None;
            }
            return;
        }
        if self.at_turn_end() && self.close.get(self.closing) == Some(&token) {
            self.closing += 1;
            if self.closing == self.close.len() {
                // The block is closed: nothing after it is a copy (waits for a token never
                // picked).
                self.at = None;
                self.waiting_for = Some(Self::NONE);
            }
            return;
        }
        self.closing = 0;
        self.picked.push(token);
        let next = self.at.map(|a| a + 1);
        self.at = match next {
            Some(n) if self.prompt.get(n) == Some(&token) && !self.copied[n] => Some(n),
            _ => self.realign(),
        };
        if let Some(a) = self.at {
            self.copied[a] = true;
            self.last = Some(a);
        }
    }

    /// The token that continues the copy, if the output is copying: the prompt's next token,
    /// or the next of the close tokens ([`Self::closed_by`]) where that is a stop token.
    pub fn continuation(&self) -> Option<u32> {
        match self.prompt.get(self.at? + 1).copied()? {
            Self::NONE => self.close.get(self.closing).copied(),
            t => Some(t),
        }
    }

    /// Whether `continuation` is picked outright over `logits` ([`Self::outright_below`]):
    /// the top logit is another token, with a probability under the threshold.
    fn takes_outright(&self, logits: &[f32], continuation: u32) -> bool {
        if self.outright_below <= 0.0 {
            return false;
        }
        let next_ends_turn = self
            .at
            .and_then(|a| self.prompt.get(a + 2))
            .is_some_and(|&t| t == Self::NONE);
        if self.at_turn_end() || next_ends_turn {
            // The state's last token and the close: the model learnt to end a state with a
            // newline, which this vocabulary merges into the last token (`]\n`); sure of it,
            // it would lose the copy's place there and run on into the state's last lines.
            return true;
        }
        let top = argmax(logits) as usize;
        if top == continuation as usize {
            return false;
        }
        let max = logits[top];
        let sum: f32 = logits.iter().map(|&l| (l - max).exp()).sum();
        // p(top) = 1 / sum; NaN logits count as unsure.
        let p_top = 1.0 / sum;
        p_top.is_nan() || p_top < self.outright_below
    }

    /// Whether the copied span has reached the end of its turn in the prompt.
    fn at_turn_end(&self) -> bool {
        self.at
            .and_then(|a| self.prompt.get(a + 1))
            .is_some_and(|&t| t == Self::NONE)
    }

    /// Prompt index of the last picked token, matched as described on [`CopyPrior`].
    fn realign(&self) -> Option<usize> {
        let (c, g) = (&self.prompt, &self.picked);
        let last = *g.last()?;
        // Smaller is better: longer match first, then nearer (after `at`, else latest).
        let rank = |i: usize| match self.at.or(self.last) {
            Some(a) if i > a => (0, i - a),
            Some(a) => (1, a - i),
            None => (0, c.len() - i),
        };
        let mut best: Option<(usize, (usize, usize), usize)> = None;
        for i in 0..c.len() {
            if c[i] != last || self.copied[i] {
                continue;
            }
            let mut k = 1;
            while k < Self::MAX_MATCH && k < g.len() && k <= i && c[i - k] == g[g.len() - 1 - k] {
                k += 1;
            }
            if k < Self::MIN_MATCH {
                continue;
            }
            let better = match best {
                None => true,
                Some((bk, br, _)) => k > bk || (k == bk && rank(i) < br),
            };
            if better {
                best = Some((k, rank(i), i));
            }
        }
        best.map(|(_, _, i)| i)
    }
}

/// Index of the largest value (lowest index on ties); `0` for an empty slice.
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &v) in logits.iter().enumerate() {
        if v > logits[best] {
            best = i;
        }
    }
    best as u32
}

impl Sampler {
    /// A sampler with its generator seeded from `params.seed`.
    pub fn new(params: SamplingParams) -> Self {
        Self {
            params,
            rng: StdRng::seed_from_u64(params.seed),
            copy: None,
            budget: None,
            loop_guard: None,
            end_after: None,
        }
    }

    /// This sampler ending the output right after `tag`: once `tag` is picked (after `gate`,
    /// when given: `</think>`, so that a reasoning that names the tag is not cut), `end` (the
    /// end of the turn, a stop token) is picked next. A world model's output is one block; a
    /// small model that closes it early, for instance where the loop guard bans a repeat,
    /// otherwise writes on after it and closes it again.
    pub fn with_end_after(mut self, gate: Option<u32>, tag: u32, end: u32) -> Self {
        self.end_after = Some(EndAfter {
            gate,
            tag,
            end,
            armed: false,
        });
        self
    }

    /// This sampler with a loop guard ([`LoopGuard`]): tokens it bans are never picked, and
    /// the copy prior does not favour them (a forced token of the thinking budget still is).
    pub fn with_loop_guard(mut self, guard: LoopGuard) -> Self {
        self.loop_guard = Some(guard);
        self
    }

    /// This sampler with a thinking budget: the output is reasoning until `forced[0]` (the
    /// reasoning's close, `</think>`) is picked, and once `tokens` tokens have been picked
    /// without it, `forced` is picked, one token a step, in place of the next draws (the close
    /// and what follows it in a well-formed output, such as the answer's opening tag: a model
    /// stopped in a loop carries on with the loop otherwise). Nothing changes after the close
    /// when the model writes it itself; an empty `forced` is no budget.
    pub fn with_thinking_budget(mut self, forced: &[u32], tokens: usize) -> Self {
        self.budget = (!forced.is_empty()).then(|| ThinkingBudget {
            forced: forced.to_vec(),
            left: tokens,
            next: 0,
        });
        self
    }

    /// This sampler with a copy prior, used when `copy_bias` is set (else it is dropped).
    pub fn with_copy_prior(mut self, prior: CopyPrior) -> Self {
        if self.params.copy_bias != 0.0 {
            self.copy = Some(prior);
        }
        self
    }

    /// The settings.
    pub fn params(&self) -> &SamplingParams {
        &self.params
    }

    /// Whether this sampler only needs the argmax (no logits read back): greedy, no copy
    /// prior, and no thinking budget still open (it must see every token).
    pub fn is_greedy(&self) -> bool {
        self.copy.is_none()
            && self.budget.is_none()
            && self.loop_guard.is_none()
            && self.end_after.is_none()
            && self.picks_argmax()
    }

    fn picks_argmax(&self) -> bool {
        self.params.temperature <= 0.0 || self.params.top_k == 1
    }

    /// Picks the next token from one row of logits `[vocab]`.
    pub fn sample(&mut self, logits: &[f32]) -> u32 {
        let forced = match &mut self.budget {
            Some(b) if b.left == 0 => {
                b.next += 1;
                b.forced.get(b.next - 1).copied()
            }
            Some(b) => {
                b.left -= 1;
                None
            }
            None => None,
        };
        let forced = forced.or(self.end_after.filter(|e| e.armed).map(|e| e.end));
        let banned = self
            .loop_guard
            .as_ref()
            .map(LoopGuard::banned)
            .unwrap_or_default();
        let guarded;
        let logits = if banned.is_empty() {
            logits
        } else {
            let mut l = logits.to_vec();
            for &t in &banned {
                if let Some(v) = l.get_mut(t as usize) {
                    *v = f32::NEG_INFINITY;
                }
            }
            guarded = l;
            &guarded[..]
        };
        let favoured = self
            .copy
            .as_ref()
            .and_then(CopyPrior::continuation)
            .filter(|&t| (t as usize) < logits.len() && !banned.contains(&t));
        let token = match (forced, favoured) {
            (Some(t), _) => t,
            (None, Some(t))
                if self
                    .copy
                    .as_ref()
                    .is_some_and(|c| c.takes_outright(logits, t)) =>
            {
                t
            }
            (None, Some(t)) => {
                let mut biased = logits.to_vec();
                biased[t as usize] += self.params.copy_bias;
                self.draw(&biased)
            }
            (None, None) => self.draw(logits),
        };
        if let Some(b) = &self.budget
            && ((forced.is_none() && b.forced[0] == token) || b.next >= b.forced.len())
        {
            // Closed by the model, or everything forced is out.
            self.budget = None;
        }
        if let Some(copy) = &mut self.copy {
            copy.push(token);
        }
        if let Some(guard) = &mut self.loop_guard {
            guard.push(token);
        }
        if let Some(e) = &mut self.end_after {
            if e.gate == Some(token) {
                e.gate = None;
            } else if e.gate.is_none() && token == e.tag {
                e.armed = true;
            }
        }
        token
    }

    fn draw(&mut self, logits: &[f32]) -> u32 {
        if self.picks_argmax() || logits.is_empty() {
            return argmax(logits);
        }
        let t = self.params.temperature;
        let mut order: Vec<usize> = (0..logits.len())
            .filter(|&i| logits[i].is_finite())
            .collect();
        if order.is_empty() {
            return argmax(logits);
        }
        order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
        if self.params.top_k > 0 {
            order.truncate(self.params.top_k);
        }
        let max = logits[order[0]] / t;
        let mut probs: Vec<f64> = order
            .iter()
            .map(|&i| ((logits[i] / t - max) as f64).exp())
            .collect();
        let sum: f64 = probs.iter().sum();
        probs.iter_mut().for_each(|p| *p /= sum);
        if self.params.top_p < 1.0 {
            let mut acc = 0.0;
            let mut keep = probs.len();
            for (n, p) in probs.iter().enumerate() {
                acc += p;
                if acc >= self.params.top_p as f64 {
                    keep = n + 1;
                    break;
                }
            }
            probs.truncate(keep);
            order.truncate(keep);
            let sum: f64 = probs.iter().sum();
            probs.iter_mut().for_each(|p| *p /= sum);
        }
        let mut draw: f64 = self.rng.random::<f64>();
        for (&i, p) in order.iter().zip(&probs) {
            if draw < *p {
                return i as u32;
            }
            draw -= p;
        }
        order[order.len() - 1] as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_prior_follows_the_copy_across_an_edit_without_looping() {
        // A state of three "lines" 10 11 | 20 21 | 30 31, each ending in 5.
        let prompt = [10, 11, 5, 20, 21, 5, 30, 31, 5];
        let mut p = CopyPrior::new(&prompt, &[]);
        p.push(10);
        assert_eq!(p.continuation(), None, "one token is not a span");
        p.push(11);
        assert_eq!(p.continuation(), Some(5));
        p.push(5);
        assert_eq!(p.continuation(), Some(20));
        // An edit: 99 in place of 20 21; the copy picks up again after it.
        p.push(99);
        assert_eq!(p.continuation(), None);
        p.push(5);
        assert_eq!(p.continuation(), None, "one token is not a span");
        p.push(30);
        assert_eq!(p.continuation(), Some(31));
        // A slip back to the first line does not send the copy round again.
        let mut p = CopyPrior::new(&prompt, &[]);
        [10, 11, 5, 20, 21, 5, 10, 11]
            .into_iter()
            .for_each(|t| p.push(t));
        assert_eq!(p.continuation(), None, "10 11 was copied already");
    }

    /// At the end of the copied turn the close tokens are asked for, in order and once; after
    /// them the prior is off, so whatever follows the close is the model's alone.
    #[test]
    fn the_end_of_a_span_asks_for_the_close_tokens_once() {
        // prompt: 7 (stop) 10 11 12 7 (stop); closed by 40 7 (close tag, end of turn).
        let prompt = [7, 10, 11, 12, 7];
        let mut prior = CopyPrior::new(&prompt, &[7]).closed_by(&[40, 7]);
        for t in [10, 11] {
            prior.push(t);
        }
        assert_eq!(prior.continuation(), Some(12));
        prior.push(12);
        assert_eq!(prior.continuation(), Some(40), "the state ended: close");
        // A token off the sequence drops it.
        let mut off = prior.clone();
        off.push(99);
        assert_eq!(off.continuation(), None);
        prior.push(40);
        assert_eq!(prior.continuation(), Some(7), "then the end of the turn");
        prior.push(7);
        assert_eq!(prior.continuation(), None, "closed: the prior is off");
        for t in [10, 11] {
            prior.push(t);
            assert_eq!(prior.continuation(), None, "off after the close ({t})");
        }
        // Without closed_by the stop token is still never favoured.
        let mut plain = CopyPrior::new(&prompt, &[7]);
        for t in [10, 11, 12] {
            plain.push(t);
        }
        assert_eq!(plain.continuation(), None);
    }

    /// A copy lost for a few tokens resumes near where it was, not at the latest match: a
    /// tree repeats short token runs on many lines, and the latest one is near the state's end.
    #[test]
    fn a_lost_copy_resumes_near_its_last_place() {
        let prompt = [10, 11, 12, 13, 14, 15, 50, 12, 13, 16];
        let mut prior = CopyPrior::new(&prompt, &[]);
        for t in [10, 11] {
            prior.push(t);
        }
        assert_eq!(prior.continuation(), Some(12));
        for t in [99, 12] {
            prior.push(t);
            assert_eq!(prior.continuation(), None, "lost after {t}");
        }
        prior.push(13);
        assert_eq!(
            prior.continuation(),
            Some(14),
            "12 13 again at 2-3, not 7-8"
        );
    }

    #[test]
    fn copy_bias_flips_a_close_call_but_not_a_confident_edit() {
        let params = SamplingParams {
            copy_bias: 2.0,
            ..SamplingParams::greedy()
        };
        // vocab 4; prompt 0 1 2 3 with 3 a stop token; picked 0 1 so far: 2 continues.
        let mut s = Sampler::new(params).with_copy_prior(CopyPrior::new(&[0, 1, 2, 3], &[3]));
        assert!(!s.is_greedy(), "the prior needs the logits");
        s.sample(&[9.0, 0.0, 0.0, 0.0]);
        s.sample(&[0.0, 9.0, 0.0, 0.0]);
        let mut close = s.clone();
        assert_eq!(close.sample(&[0.0, 0.0, 1.0, 2.5]), 2);
        assert_eq!(s.sample(&[0.0, 0.0, 1.0, 4.0]), 3);
        // After 2 the prompt holds the stop token 3: it is not favoured.
        assert_eq!(
            close.sample(&[0.0, 0.0, 1.0, 0.5]),
            2,
            "3 would win with a bonus"
        );
        // Without the prompt, or with a zero bias, sampling is unchanged.
        let mut plain = Sampler::new(params);
        plain.sample(&[9.0, 0.0, 0.0, 0.0]);
        plain.sample(&[0.0, 9.0, 0.0, 0.0]);
        assert_eq!(plain.sample(&[0.0, 0.0, 1.0, 2.5]), 3);
        assert!(
            Sampler::new(SamplingParams::greedy())
                .with_copy_prior(CopyPrior::new(&[0, 1, 2], &[]))
                .is_greedy()
        );
    }

    /// Gated, an unsure model's top token no longer outweighs the copy however little the
    /// copy's token gets; a sure one is still weighed with the bonus and writes its edit.
    #[test]
    fn an_unsure_model_keeps_the_copy_and_a_sure_one_writes_its_edit() {
        let params = SamplingParams {
            copy_bias: 2.0,
            ..SamplingParams::greedy()
        };
        // The prompt's state is 0 1 2 0, followed by the stop token 3; 0 1 is copied so far.
        let prior = |state: &[u32]| {
            let mut p = CopyPrior::new(state, &[3]);
            p.push(0);
            p.push(1);
            p
        };
        let long = || prior(&[0, 1, 2, 0, 3]);
        // Unsure (top 5 at p 0.37) and far from the copy's 2 (-6): the plain bonus loses.
        let unsure = [0.0, 0.0, -6.0, 0.0, 1.0, 1.2];
        let mut plain = Sampler::new(params).with_copy_prior(long());
        assert_eq!(plain.sample(&unsure), 5);
        let gated = Sampler::new(params).with_copy_prior(long().outright_below(0.5));
        assert_eq!(
            gated.clone().sample(&unsure),
            2,
            "the copy is taken outright"
        );
        // Sure of 4 (p 0.9), by more than the bonus: the edit is written.
        assert_eq!(gated.clone().sample(&[0.0, 0.0, 1.0, 0.0, 5.0, 0.0]), 4);
        // Sure, but by less than the bonus: the copy still wins.
        assert_eq!(gated.clone().sample(&[0.0, 0.0, 3.5, 0.0, 5.0, 0.0]), 2);
        // In a state 0 1 2, its last token (2) and the close (4) are taken outright, however
        // sure the model is of something else (5: a merged `]\n`).
        let mut end = Sampler::new(params)
            .with_copy_prior(prior(&[0, 1, 2, 3]).closed_by(&[4]).outright_below(0.5));
        assert_eq!(end.sample(&[0.0, 0.0, 0.0, 0.0, 0.0, 9.0]), 2);
        assert_eq!(end.sample(&[0.0, 0.0, 0.0, 0.0, 0.0, 9.0]), 4);
    }

    /// A repeat is banned once the output holds a span as often as the prompt does, and not
    /// before: copying the prompt's repeats stays allowed.
    #[test]
    fn the_loop_guard_bans_a_repeat_beyond_the_prompts() {
        // The prompt holds 1 2 3 twice; the model would write 1 2 3 for ever (vocab 5, 4 ends).
        let mut s = Sampler::new(SamplingParams::greedy())
            .with_loop_guard(LoopGuard::new(&[1, 2, 3, 9, 1, 2, 3], 3).after(0));
        assert!(!s.is_greedy(), "the guard must see every token");
        let next = |last: u32| {
            let mut l = [0.0f32; 5];
            l[(last % 3 + 1) as usize] = 9.0;
            l[4] = 1.0;
            l
        };
        assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0]), 0, "the gate");
        let mut last = 0;
        let mut picked = Vec::new();
        for _ in 0..10 {
            last = s.sample(&next(last));
            picked.push(last);
            if last == 4 {
                break;
            }
        }
        // 1 2 3 is written twice, as often as the prompt has it; 2 3 1, which the prompt
        // never has, once: its repeat is banned and the model's next choice (4) is taken.
        assert_eq!(picked, [1, 2, 3, 1, 2, 3, 4]);
        // With the block's end after 4, the turn ends there (5), outside the reasoning only.
        let mut s = Sampler::new(SamplingParams::greedy()).with_end_after(Some(0), 4, 5);
        let four = [0.0, 0.0, 0.0, 0.0, 9.0, 0.0];
        assert_eq!(s.sample(&four), 4, "in the reasoning");
        assert_eq!(s.sample(&four), 4, "in the reasoning still");
        assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0);
        assert_eq!(s.sample(&four), 4);
        assert_eq!(s.sample(&four), 5, "the end follows the block");
        // A guard bans nothing inside the reasoning (before the gate).
        let mut g = LoopGuard::new(&[], 2).after(0);
        [1, 1, 1].into_iter().for_each(|t| g.push(t));
        assert!(g.banned().is_empty());
    }

    /// The reasoning is closed after its budget, once; a reasoning closed in time is not
    /// touched, and neither is anything after the close.
    #[test]
    fn a_thinking_budget_closes_a_looping_reasoning() {
        // vocab 4; 3 closes the reasoning, 2 opens the answer; the model would loop on 1.
        let looping = [0.0, 9.0, 0.0, 0.0];
        let mut s = Sampler::new(SamplingParams::greedy()).with_thinking_budget(&[3, 2], 2);
        assert!(!s.is_greedy(), "the budget must see every token");
        let picked: Vec<u32> = (0..6).map(|_| s.sample(&looping)).collect();
        assert_eq!(picked, [1, 1, 3, 2, 1, 1]);
        assert!(s.is_greedy(), "closed: plain greedy again");
        // Closed by the model within budget: nothing forced.
        let mut s = Sampler::new(SamplingParams::greedy()).with_thinking_budget(&[3, 2], 2);
        s.sample(&[0.0, 0.0, 0.0, 9.0]);
        assert_eq!(s.sample(&looping), 1);
        assert_eq!(s.sample(&looping), 1);
        assert_eq!(s.sample(&looping), 1);
        // Closed by the model with its last token of budget: not closed twice.
        let mut s = Sampler::new(SamplingParams::greedy()).with_thinking_budget(&[3, 2], 1);
        assert_eq!(s.sample(&[0.0, 0.0, 0.0, 9.0]), 3);
        assert_eq!(s.sample(&looping), 1);
    }

    #[test]
    fn greedy_picks_argmax_lowest_on_ties() {
        let mut s = Sampler::new(SamplingParams::greedy());
        assert_eq!(s.sample(&[0.1, 3.0, 3.0, -1.0]), 1);
    }

    #[test]
    fn top_k_one_is_greedy_even_when_hot() {
        let mut s = Sampler::new(SamplingParams {
            temperature: 5.0,
            top_k: 1,
            ..Default::default()
        });
        for _ in 0..20 {
            assert_eq!(s.sample(&[0.0, 1.0, 0.5]), 1);
        }
    }

    #[test]
    fn top_p_keeps_only_the_nucleus() {
        // probabilities ~ [0.64, 0.24, 0.09, 0.03]: top_p 0.8 keeps the first two.
        let logits = [3.0f32, 2.0, 1.0, 0.0];
        let mut s = Sampler::new(SamplingParams {
            temperature: 1.0,
            top_p: 0.8,
            seed: 7,
            ..Default::default()
        });
        let mut seen = [0usize; 4];
        for _ in 0..2000 {
            seen[s.sample(&logits) as usize] += 1;
        }
        assert_eq!(seen[2] + seen[3], 0, "{seen:?}");
        assert!(seen[1] > 300 && seen[0] > seen[1], "{seen:?}");
    }

    #[test]
    fn same_seed_same_draws() {
        let logits: Vec<f32> = (0..50).map(|i| (i as f32 * 0.37).sin()).collect();
        let p = SamplingParams {
            temperature: 1.0,
            seed: 42,
            ..Default::default()
        };
        let (mut a, mut b) = (Sampler::new(p), Sampler::new(p));
        let xs: Vec<u32> = (0..30).map(|_| a.sample(&logits)).collect();
        let ys: Vec<u32> = (0..30).map(|_| b.sample(&logits)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().collect::<std::collections::BTreeSet<_>>().len() > 5);
    }
}
