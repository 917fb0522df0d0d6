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
mod tests {
    use super::*;

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
    #[allow(clippy::single_range_in_vec_init)] // lists of spans, some of one
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
        // With a copy prior the guard counts only the model's own tokens: copying 1 2 3 twice
        // more than the prompt holds it is no loop, writing 2 3 1 twice is.
        let params = SamplingParams {
            copy_bias: 20.0,
            ..SamplingParams::greedy()
        };
        let mut s = Sampler::new(params)
            .with_copy_prior(CopyPrior::new(&[1, 2, 3, 1, 2, 3], &[]).sources(&[0..6]))
            .with_loop_guard(LoopGuard::new(&[1, 2, 3, 1, 2, 3], 3));
        let picked: Vec<u32> = (0..13)
            .scan(0, |last, _| {
                *last = s.sample(&next(*last));
                Some(*last)
            })
            .take_while(|&t| t != 4)
            .collect();
        assert_eq!(
            picked,
            [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3],
            "the copy, then the model's own spans as often as the prompt has them"
        );
        // The turn ending inside the block (opened by 3) closes the block first.
        let end = [0.0, 0.0, 0.0, 0.0, 0.0, 9.0];
        let mut s = Sampler::new(SamplingParams::greedy())
            .with_end_after(Some(0), 4, 5)
            .closing_open_block(3);
        assert_eq!(s.sample(&end), 5, "in the reasoning, not touched");
        let mut s = Sampler::new(SamplingParams::greedy())
            .with_end_after(Some(0), 4, 5)
            .closing_open_block(3);
        assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0);
        assert_eq!(s.sample(&end), 5, "no block open yet");
        let mut s = Sampler::new(SamplingParams::greedy())
            .with_end_after(Some(0), 4, 5)
            .closing_open_block(3);
        assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0);
        assert_eq!(s.sample(&[0.0, 0.0, 0.0, 9.0, 0.0, 0.0]), 3, "opens");
        assert_eq!(s.sample(&end), 4, "closed first");
        assert_eq!(s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0, 0.0]), 5, "then the end");
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

    /// An answer opened inside the reasoning closes the reasoning first, then the budget's
    /// tail is written; after the close, the same token is the model's as usual.
    #[test]
    fn an_answer_opened_inside_the_reasoning_closes_it_first() {
        // vocab 5; 3 closes the reasoning, 2 opens the answer, 4 is a stop token.
        let opens = [0.0, 0.0, 9.0, 0.0, 0.0];
        let mut s = Sampler::new(SamplingParams::greedy())
            .with_thinking_budget(&[3, 2], 100)
            .closing_before(&[2, 4]);
        assert_eq!(s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0]), 1, "reasoning");
        assert_eq!(s.sample(&opens), 3, "closed first");
        assert_eq!(
            s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0]),
            2,
            "then the opening tag, forced"
        );
        assert!(s.is_greedy(), "the budget is spent");
        assert_eq!(s.sample(&opens), 2, "after the close, the model's own");
        // A stop token inside the reasoning does the same; without a budget, nothing changes.
        let mut s = Sampler::new(SamplingParams::greedy())
            .with_thinking_budget(&[3, 2], 100)
            .closing_before(&[2, 4]);
        assert_eq!(s.sample(&[0.0, 0.0, 0.0, 0.0, 9.0]), 3);
        let mut plain = Sampler::new(SamplingParams::greedy()).closing_before(&[2, 4]);
        assert_eq!(plain.sample(&opens), 2);
    }

    #[test]
    fn a_token_allowed_once_is_not_picked_again() {
        let mut s = Sampler::new(SamplingParams::greedy()).at_most_once(2);
        assert!(!s.is_greedy(), "it must see every token");
        assert_eq!(s.sample(&[0.0, 0.0, 9.0]), 2);
        assert_eq!(s.sample(&[0.0, 1.0, 9.0]), 1, "the next best");
        assert_eq!(s.sample(&[5.0, 1.0, 9.0]), 0);
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
