//! Next-token sampling from logits: greedy, temperature, top-k, top-p, seeded.
//!
//! The order follows transformers' `generate` logits processors and vLLM's sampler:
//! temperature, then top-k, then top-p (nucleus), then a draw from the renormalised
//! distribution. A temperature of 0 means greedy (argmax, lowest id on ties).

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
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            seed: 0,
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
        }
    }

    /// The settings.
    pub fn params(&self) -> &SamplingParams {
        &self.params
    }

    /// Whether this sampler only needs the argmax (no logits read back).
    pub fn is_greedy(&self) -> bool {
        self.params.temperature <= 0.0 || self.params.top_k == 1
    }

    /// Picks the next token from one row of logits `[vocab]`.
    pub fn sample(&mut self, logits: &[f32]) -> u32 {
        if self.is_greedy() || logits.is_empty() {
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
