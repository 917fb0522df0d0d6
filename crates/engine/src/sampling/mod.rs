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

mod copy_prior;
mod loop_guard;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub use copy_prior::CopyPrior;
pub use loop_guard::LoopGuard;

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
    /// [`Sampler::with_end_after`].
    end_after: Option<EndAfter>,
    /// [`Sampler::closing_before`].
    closing_before: Vec<u32>,
    /// [`Sampler::at_most_once`]: the token, and whether it has been picked.
    once: Option<(u32, bool)>,
}

/// What [`Sampler::with_end_after`] keeps.
#[derive(Debug, Clone, Copy)]
struct EndAfter {
    gate: Option<u32>,
    tag: u32,
    end: u32,
    armed: bool,
    /// [`Sampler::closing_open_block`]: the tag that opens the block.
    open: Option<u32>,
    /// The block is open (its opening tag picked after the gate, its close not yet).
    inside: bool,
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
            closing_before: Vec::new(),
            once: None,
        }
    }

    /// `token` is never picked a second time (the reasoning's close, `</think>`: an output
    /// has one reasoning, and a second close, which the demo model wrote at temperature 1,
    /// leaves reasoning in the answer).
    pub fn at_most_once(mut self, token: u32) -> Self {
        self.once = Some((token, false));
        self
    }

    /// With a thinking budget ([`Sampler::with_thinking_budget`]), a token of `tokens` picked
    /// while the reasoning is open (the observation's opening or closing tag, a stop token)
    /// closes the reasoning first: the budget's close is written in its place, then the rest
    /// of what the budget forces (the observation's opening tag), as if the budget had run
    /// out. A small model that opens its observation without closing its reasoning otherwise
    /// leaves an output whose block sits inside `<think>` (the demo model's one malformed
    /// held-out Web row), and a copy prior waiting for the close never starts.
    pub fn closing_before(mut self, tokens: &[u32]) -> Self {
        self.closing_before = tokens.to_vec();
        self
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
            open: None,
            inside: false,
        });
        self
    }

    /// With [`Sampler::with_end_after`], a block opened by `open` (after the gate) is closed
    /// before the turn ends: where the model picks the end of the turn inside it, `tag` (the
    /// close) is written in its place, then the end. After a copy of a terminal screen the
    /// demo model sometimes ended its turn inside the block, an output the benchmark's parser
    /// does not read as one closed block.
    pub fn closing_open_block(mut self, open: u32) -> Self {
        if let Some(e) = &mut self.end_after {
            e.open = Some(open);
        }
        self
    }

    /// This sampler with a loop guard ([`LoopGuard`]): tokens it bans are never picked, and
    /// the copy prior does not favour them (a forced token of the thinking budget still is).
    /// With a copy prior, the guard sees only what the model writes itself: a token that
    /// continues the copy is not counted (a copied screen holds the prompt's spans once more
    /// than the prompt's history does, and the new lines after it are what loops).
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

    /// This sampler with a copy prior, used when `copy_bias` is set or the prior has a bias of
    /// its own on named lines ([`CopyPrior::has_named_bias`]; else it is dropped).
    pub fn with_copy_prior(mut self, prior: CopyPrior) -> Self {
        if self.params.copy_bias != 0.0 || prior.has_named_bias() {
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
            && self.once.is_none()
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
        let mut banned = self
            .loop_guard
            .as_ref()
            .map(LoopGuard::banned)
            .unwrap_or_default();
        if let Some((t, true)) = self.once {
            banned.push(t);
        }
        if let Some(copy) = &self.copy {
            banned.extend_from_slice(copy.banned(logits));
        }
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
        // With copy_bias 0 (a prior on the named lines alone), a continuation off those
        // lines is not favoured, nor taken outright.
        let favoured = self
            .copy
            .as_ref()
            .filter(|c| self.params.copy_bias != 0.0 || c.bias(0.0) != 0.0)
            .and_then(CopyPrior::continuation)
            .filter(|&t| (t as usize) < logits.len() && !banned.contains(&t));
        let mut token = match (forced, favoured) {
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
                let bias = self
                    .copy
                    .as_ref()
                    .map_or(self.params.copy_bias, |c| c.bias(self.params.copy_bias));
                biased[t as usize] += bias;
                self.draw(&biased)
            }
            (None, None) => self.draw(logits),
        };
        if forced.is_none()
            && self.closing_before.contains(&token)
            && let Some(b) = &mut self.budget
        {
            // The answer opened inside the reasoning: close it first, then force the rest.
            token = b.forced[0];
            (b.left, b.next) = (0, 1);
            if b.next >= b.forced.len() {
                self.budget = None;
            }
        } else if let Some(b) = &self.budget
            && ((forced.is_none() && b.forced[0] == token) || b.next >= b.forced.len())
        {
            // Closed by the model, or everything forced is out.
            self.budget = None;
        }
        if forced.is_none()
            && let Some(e) = &self.end_after
            && e.inside
            && token == e.end
        {
            // The turn ends inside the block: close the block first.
            token = e.tag;
        }
        if let Some((t, seen)) = &mut self.once {
            *seen |= *t == token;
        }
        if let Some(copy) = &mut self.copy {
            copy.push(token);
        }
        if let Some(guard) = &mut self.loop_guard
            && favoured != Some(token)
        {
            // What the copy wrote is the prompt's, not a loop of the model's.
            guard.push(token);
        }
        if let Some(e) = &mut self.end_after {
            if e.gate == Some(token) {
                e.gate = None;
            } else if e.gate.is_none() && token == e.tag {
                (e.armed, e.inside) = (true, false);
            } else if e.gate.is_none() && e.open == Some(token) {
                e.inside = true;
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
mod tests;
