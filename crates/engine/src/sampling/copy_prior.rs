//! The copy prior: a logit bonus for the token that continues the span of the prompt the
//! output is copying. The continuation is found as prompt-lookup decoding finds its drafts
//! (Saxena 2023, "Prompt Lookup Decoding"); here it changes the choice instead of only
//! speeding it up.

use super::argmax;

/// The copy prior of [`copy_bias`](super::SamplingParams::copy_bias): where in the prompt the
/// output is copying from, and so which token would continue the copy.
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
///
/// With [`Self::sources`] the copy follows only the given spans (the current state) and ends
/// where they end, optionally continuing with tokens of its own ([`Self::then`]: the command a
/// shell echoes); after that the prior is off and the rest is the model's.
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
    /// [`Self::named`]: prompt positions copied under `named_bias` instead.
    named: Vec<bool>,
    named_bias: f32,
    /// [`Self::line_breaks`]: tokens that hold a newline, sorted.
    breaks: Vec<u32>,
    /// [`Self::edits_named`]: a named line is never written back unchanged.
    edits: bool,
    /// After the output left the copy on a named line: the prompt position of the end of
    /// that line, where the copy resumes once the output ends its line.
    resume: Option<usize>,
    /// [`Self::sources`]: the prompt positions the copy may follow (empty: all of them).
    source: Vec<bool>,
    /// The first position of the sources.
    source_start: Option<usize>,
    /// [`Self::then`]: favoured, in order, where the sources end.
    then: Vec<u32>,
    /// How many of `then` have been picked, while they are being picked.
    echoing: Option<usize>,
    /// [`Self::opened_by`]: the tokens that open the block the sources are copied into.
    opening: Vec<u32>,
    /// The block has just opened: the sources' first token continues it.
    at_top: bool,
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
            named: Vec::new(),
            named_bias: 0.0,
            breaks: Vec::new(),
            edits: false,
            resume: None,
            source: Vec::new(),
            source_start: None,
            then: Vec::new(),
            echoing: None,
            opening: Vec::new(),
            at_top: false,
        }
    }

    /// With [`Self::sources`], the tokens that open the block the state is copied into
    /// (`<predicted_observation>` and its newline): once the output ends with them, before the
    /// copy is placed, the sources' first token is favoured, and picking it places the copy at
    /// their top. Without it the first token was the model's alone, and a screen unlike the
    /// training screens lost its first characters (`[user@host dir]$` came back as
    /// `RootWebAreauser@host dir]$`).
    pub fn opened_by(mut self, tokens: &[u32]) -> Self {
        self.opening = tokens.to_vec();
        self
    }

    /// The copy follows only prompt positions in `ranges` (token indices, `[start, end)`: the
    /// current state, `agentworld_world::action::copy_sources_in_prompt`), and ends where they
    /// end. A lost copy is placed again only inside them; before the first placement the
    /// earliest match is taken (a state is copied from its top), and the sources' first token
    /// alone places it. Where the copy reaches the sources' end, [`Self::then`]'s tokens are
    /// favoured in order; after them, or after a token off them, the prior is off for the rest
    /// of the output, and [`Self::closed_by`]'s close is not asked for (the output goes on
    /// past the copy). A terminal screen only grows: without sources the copy could leave the
    /// screen for a line of an earlier screen in the history (a longer match), and without an
    /// end it closed the block where the old screen ended, before the new lines. Ranges past
    /// the prompt are cut; no range at all leaves the whole prompt copyable.
    pub fn sources(mut self, ranges: &[std::ops::Range<usize>]) -> Self {
        let source = mask(self.prompt.len(), ranges);
        self.source_start = source.iter().position(|&f| f);
        self.source = if self.source_start.is_some() {
            source
        } else {
            Vec::new()
        };
        self
    }

    /// Tokens that continue the copy where [`Self::sources`] end (the command a shell echoes
    /// after its prompt). Without sources they are never asked for.
    pub fn then(mut self, tokens: &[u32]) -> Self {
        self.then = tokens.to_vec();
        self
    }

    /// Whether the pointer at `a` is on the last position of the sources.
    fn ends_source(&self, a: usize) -> bool {
        !self.source.is_empty() && !self.source.get(a + 1).copied().unwrap_or(false)
    }

    /// The prior is off for the rest of the output (waits for a token never picked).
    fn turn_off(&mut self) {
        self.at = None;
        self.echoing = None;
        self.waiting_for = Some(Self::NONE);
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

    /// Where the model's own top token has a probability under `confidence` (softmax of the raw
    /// logits) and is not the continuation, the continuation is picked outright instead of being
    /// weighed against the model with [`copy_bias`](super::SamplingParams::copy_bias); at or above
    /// it, the bonus decides as usual. The state's last token and, where the copy reaches the end
    /// of its turn, the close ([`Self::closed_by`]) are always taken outright. A plain bonus cannot
    /// tell an edit from a slip: a bonus large enough to hold a 40-line copy together (15 nats)
    /// also overrides the edits the model is sure of, and the slips that broke copies came where
    /// the model was unsure and gave the copy's token almost nothing. Teacher-forced on held-out
    /// rows 100–149 of the demo model (`crates/train/examples/edit_margin.rs`), a 4-nat bonus gated
    /// at 0.5 broke 0 / 10 / 6 of the Android / OS / Web copied tokens and wrote 134 / 85 / 90 of
    /// their edits, where 15 nats alone broke none and wrote 32 / 10 / 17. 0 (the default) or less:
    /// always weighed. Not a number: 0.
    pub fn outright_below(mut self, confidence: f32) -> Self {
        self.outright_below = if confidence.is_nan() { 0.0 } else { confidence };
        self
    }

    /// Prompt positions (token indices in `ranges`, `[start, end)`) where the action names the
    /// state: the lines of the element it acts on
    /// (`agentworld_world::action::named_lines`). Where the continuation lies there, the
    /// bonus is `bias` nats instead of [`copy_bias`](super::SamplingParams::copy_bias); the
    /// gate of [`Self::outright_below`] still holds (an unsure model copies). A bonus large
    /// enough to hold a 40-line copy together also overrides the edits the model is sure of;
    /// on the line the action acts on it need not, and the rest of the state keeps it. On the
    /// demo model's held-out Android rows 100–149, 0 nats there (4 elsewhere, gated at 0.5)
    /// wrote 55% of the changed lines instead of 6%. Ranges past the prompt are cut; a bias
    /// that is not a number is 0.
    pub fn named(mut self, ranges: &[std::ops::Range<usize>], bias: f32) -> Self {
        self.named = mask(self.prompt.len(), ranges);
        self.named_bias = if bias.is_nan() { 0.0 } else { bias };
        self
    }

    /// The tokens that hold a newline (`tokens` in any order). With them, an output that
    /// leaves the copy on a named line ([`Self::named`]) resumes it at the next line once it
    /// writes a newline of its own: the edit takes the named line's place, and neither the
    /// rest of that line nor the lines before it are copied again. Without, a slip on the
    /// state's last line found nothing left to copy, and the model repeated lines until
    /// `max_tokens` (2 of the demo model's 100 held-out Android rows). Until the newline the
    /// copy may pick up anywhere, as elsewhere: held to the rest of the edited line, slips that
    /// had rejoined a later line wrote garbled lines instead (98% well-formed).
    pub fn line_breaks(mut self, tokens: &[u32]) -> Self {
        self.breaks = tokens.to_vec();
        self.breaks.sort_unstable();
        self.breaks.dedup();
        self
    }

    /// The output writes edits of the named lines ([`Self::named`]), not one of them back
    /// unchanged: a patch-form observation (`agentworld_world::diff::write_patch`), where a
    /// line copied as it is changes nothing. Where the output line so far is a named line
    /// copied from its start up to the line's end, the break is not favoured, and the tokens
    /// that break the line ([`Self::line_breaks`]) may not be picked ([`Self::banned`]) unless
    /// the model gives them [`Self::SURE_OF_BREAK`] of its probability or more (a line copied
    /// as the place to insert after, which a patch writes before its `+` lines). The model
    /// then writes its edit where the copy would have ended the line: on the demo model's
    /// held-out Web rows 0–99, with the typed text named too, 19.5% of the changed lines
    /// right instead of 3.4%, node F1 0.831 instead of 0.799 (the unchanged state's 0.814).
    /// Without line breaks this does nothing.
    pub fn edits_named(mut self) -> Self {
        self.edits = true;
        self
    }

    /// The share of the model's probability on the line breaks at or above which
    /// [`Self::edits_named`] lets an unchanged named line end: the model is sure this line is
    /// a place to insert after. Banned outright, the Desktop and Android patches of the demo
    /// model lost those places (OS well-formed 74% to 67%); at 0.8 and at 0.95 they are kept
    /// and the Web gain stays whole; at 0.5 it halves.
    pub const SURE_OF_BREAK: f32 = 0.8;

    /// Tokens that must not be picked next, given the model's `logits` `[vocab]`: the line
    /// breaks, where [`Self::edits_named`] holds, the output line so far is a named line
    /// copied unchanged to its end, and the model gives the breaks less than
    /// [`Self::SURE_OF_BREAK`] of its probability. Empty otherwise.
    pub fn banned(&self, logits: &[f32]) -> &[u32] {
        if !self.unchanged_at_line_end() {
            return &[];
        }
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = logits.iter().map(|&l| (l - max).exp()).sum();
        let on_breaks: f32 = self
            .breaks
            .iter()
            .filter_map(|&t| logits.get(t as usize))
            .map(|&l| (l - max).exp())
            .sum();
        // NaN logits: not sure of anything, so the rule holds.
        if on_breaks / sum >= Self::SURE_OF_BREAK {
            &[]
        } else {
            &self.breaks
        }
    }

    /// Whether the output line so far (the tokens picked after the last line break) is the
    /// named prompt line the pointer is on, from its start, and the prompt's next token
    /// ends that line.
    fn unchanged_at_line_end(&self) -> bool {
        if !self.edits || self.breaks.is_empty() || self.waiting_for.is_some() {
            return false;
        }
        let Some(a) = self.at else { return false };
        if self.named.get(a) != Some(&true) {
            return false;
        }
        let ends = match self.prompt.get(a + 1) {
            Some(&t) => t == Self::NONE || self.breaks_line(t),
            None => true,
        };
        if !ends {
            return false;
        }
        let line_start = |tokens: &[u32]| {
            tokens
                .iter()
                .rposition(|&t| self.breaks_line(t))
                .map_or(0, |q| q + 1)
        };
        let prompt_line = &self.prompt[line_start(&self.prompt[..=a])..=a];
        let output_line = &self.picked[line_start(&self.picked)..];
        !prompt_line.is_empty() && prompt_line == output_line
    }

    fn breaks_line(&self, token: u32) -> bool {
        token != Self::NONE && self.breaks.binary_search(&token).is_ok()
    }

    /// The bonus for [`Self::continuation`]: `copy_bias`, or the named lines' bias where the
    /// continuation is on one ([`Self::named`]).
    pub fn bias(&self, copy_bias: f32) -> f32 {
        if self.continues_named() {
            self.named_bias
        } else {
            copy_bias
        }
    }

    /// Whether [`Self::named`] set a non-zero bias on some prompt position: the prior then
    /// runs even where `copy_bias` is 0, on the named lines alone.
    pub fn has_named_bias(&self) -> bool {
        self.named_bias != 0.0 && self.named.iter().any(|&n| n)
    }

    /// Whether the continuation is a prompt token on a named line.
    fn continues_named(&self) -> bool {
        self.at
            .map(|a| a + 1)
            .and_then(|n| self.named.get(n))
            .copied()
            .unwrap_or(false)
    }

    /// Records a picked token and moves the pointer.
    pub fn push(&mut self, token: u32) {
        if let Some(gate) = self.waiting_for {
            if token == gate {
                self.waiting_for = None;
            }
            return;
        }
        if std::mem::take(&mut self.at_top)
            && let Some(s0) = self.source_start
            && self.prompt[s0] == token
        {
            self.picked.push(token);
            (self.at, self.last) = (Some(s0), Some(s0));
            self.copied[s0] = true;
            return;
        }
        if let Some(k) = self.echoing {
            match self.then.get(k) {
                Some(&t) if t == token && k + 1 < self.then.len() => self.echoing = Some(k + 1),
                _ => self.turn_off(),
            }
            return;
        }
        if self.at.is_some_and(|a| self.ends_source(a)) {
            match self.then.first() {
                Some(&t) if t == token && self.then.len() > 1 => {
                    self.at = None;
                    self.echoing = Some(1);
                }
                _ => self.turn_off(),
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
        if self.source_start.is_some()
            && self.last.is_none()
            && !self.opening.is_empty()
            && self.picked.ends_with(&self.opening)
        {
            self.at_top = true;
            return;
        }
        let next = self.at.map(|a| a + 1);
        let left_named = next.is_some_and(|n| {
            self.named.get(n) == Some(&true) && self.prompt.get(n) != Some(&token)
        });
        if left_named && !self.breaks.is_empty() {
            // The end of the line the output left: the first prompt token from there on that
            // breaks the line (or the state's last token).
            let n = next.unwrap_or(0);
            let end = (n..self.prompt.len())
                .find(|&q| {
                    self.breaks_line(self.prompt[q]) || self.prompt.get(q + 1) == Some(&Self::NONE)
                })
                .unwrap_or(self.prompt.len() - 1);
            self.resume = Some(end);
        }
        self.at = match next {
            Some(n) if self.prompt.get(n) == Some(&token) && !self.copied[n] => Some(n),
            _ if self.resume.is_some() && self.breaks_line(token) => {
                // The edited line ended: the rest of the named line is not copied.
                let end = self.resume.take().unwrap_or(0);
                let from = self.last.map_or(end, |l| l + 1).min(end);
                for c in &mut self.copied[from..end] {
                    *c = true;
                }
                Some(end)
            }
            _ => self.realign(),
        };
        if self.at.is_some() && !left_named {
            self.resume = None;
        }
        if let Some(a) = self.at {
            self.copied[a] = true;
            self.last = Some(a);
        }
    }

    /// The token that continues the copy, if the output is copying: the prompt's next token,
    /// or the next of the close tokens ([`Self::closed_by`]) where that is a stop token.
    pub fn continuation(&self) -> Option<u32> {
        if self.unchanged_at_line_end() {
            // Nothing to favour: the line must not end as it is (`Self::edits_named`).
            return None;
        }
        if self.at_top {
            return self.source_start.map(|s0| self.prompt[s0]);
        }
        if let Some(k) = self.echoing {
            return self.then.get(k).copied();
        }
        if self.ends_source(self.at?) {
            return self.then.first().copied();
        }
        match self.prompt.get(self.at? + 1).copied()? {
            Self::NONE => self.close.get(self.closing).copied(),
            t => Some(t),
        }
    }

    /// Whether `continuation` is picked outright over `logits` ([`Self::outright_below`]):
    /// the top logit is another token, with a probability under the threshold.
    pub(super) fn takes_outright(&self, logits: &[f32], continuation: u32) -> bool {
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
        if self.echoing.is_some() || self.at.is_some_and(|a| self.ends_source(a)) {
            // The echo ([`Self::then`]) is the keys as typed: nothing for the model to weigh.
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
        let sourced = !self.source.is_empty();
        // Before any placement, the sources' first token alone starts the copy at their top
        // (a longer match on a later line, `\nuser@` against the top's `user@`, would skip
        // the first lines).
        if let Some(s0) = self.source_start.filter(|_| self.last.is_none())
            && c[s0] == last
            && !self.copied[s0]
        {
            return Some(s0);
        }
        // Smaller is better: longer match first, then nearer (after `at`, else latest; with
        // sources, before any placement, earliest).
        let rank = |i: usize| match self.at.or(self.last) {
            Some(a) if i > a => (0, i - a),
            Some(a) => (1, a - i),
            None if sourced => (0, i),
            None => (0, c.len() - i),
        };
        let mut best: Option<(usize, (usize, usize), usize)> = None;
        for i in 0..c.len() {
            if c[i] != last || self.copied[i] || (sourced && !self.source[i]) {
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

/// A flag for each of `len` prompt positions, set inside `ranges` (cut at `len`).
fn mask(len: usize, ranges: &[std::ops::Range<usize>]) -> Vec<bool> {
    let mut flags = vec![false; len];
    for r in ranges {
        let end = r.end.min(len);
        for flag in &mut flags[r.start.min(end)..end] {
            *flag = true;
        }
    }
    flags
}

#[cfg(test)]
mod tests;
