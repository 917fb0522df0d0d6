//! The loop guard: transformers' `no_repeat_ngram_size` (`NoRepeatNGramLogitsProcessor`), with
//! the prompt's n-grams allowed as often as the prompt holds them, since a world model copies
//! its state and banning every n-gram of the prompt would ban the copy itself.

use std::collections::HashMap;

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
