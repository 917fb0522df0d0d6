//! [`DecodeBatch`]: continuous batching, one decode step at a time.
//!
//! A server keeps one `DecodeBatch` and, between decode steps, [`DecodeBatch::add`]s new
//! requests and [`DecodeBatch::cancel`]s abandoned ones; [`DecodeBatch::step`] advances every
//! running sequence by one token in a single forward pass.
//!
//! Layout: each new prompt is prefilled on its own (batch of one, no padding, exactly as
//! [`Engine::generate`] does), then its cache joins the running batch with
//! [`ModelCache::concat`], which left-pads the shorter rows' keys and values with masked
//! positions; Gated DeltaNet states are per row and simply stacked. A sequence that finishes
//! or is cancelled leaves at once ([`ModelCache::retain`]), and positions that are padding in
//! every remaining row are trimmed, so the cache never holds more positions than its longest
//! row. Because every row is computed as it would be alone (masked padding contributes exact
//! zeros), greedy output is the same as one request at a time.
//!
//! Prefill is not chunked: a long prompt delays the running sequences by its prefill time.

use crate::sampling::Sampler;
use agentworld_model::{ModelCache, TokenBatch};
use agentworld_text::DecodeStream;
use burn::tensor::backend::Backend;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::generate::{FinishReason, GenerateParams, PromptMarks};

/// What one sequence produced in one call of [`DecodeBatch::add`] or [`DecodeBatch::step`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceEvent {
    /// The caller's id of the sequence.
    pub id: u64,
    /// The generated token, `None` when it was a stop token.
    pub token: Option<u32>,
    /// Text completed by this token (may be empty: a token can end inside a character or be
    /// a skipped special token). On the last event it includes any held-back text.
    pub text: String,
    /// Set when the sequence has ended and left the batch.
    pub finish: Option<FinishReason>,
}

struct Row<'e> {
    id: u64,
    stream: DecodeStream<'e>,
    generated: usize,
    limit: usize,
    /// The token to feed at the next step.
    next: u32,
}

/// A running batch of sequences that decode together and can join or leave between steps.
pub struct DecodeBatch<'e, B: Backend> {
    engine: &'e Engine<B>,
    cache: Option<ModelCache<B>>,
    rows: Vec<Row<'e>>,
    samplers: Vec<Sampler>,
}

impl<B: Backend> std::fmt::Debug for DecodeBatch<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodeBatch")
            .field("ids", &self.ids())
            .field(
                "cached_positions",
                &self.cache.as_ref().map(ModelCache::seq_len),
            )
            .finish()
    }
}

impl<'e, B: Backend> DecodeBatch<'e, B> {
    /// An empty batch decoding with `engine`.
    pub fn new(engine: &'e Engine<B>) -> Self {
        Self {
            engine,
            cache: None,
            rows: Vec::new(),
            samplers: Vec::new(),
        }
    }

    /// Running sequences.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no sequence is running.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Ids of the running sequences, in row order.
    pub fn ids(&self) -> Vec<u64> {
        self.rows.iter().map(|r| r.id).collect()
    }

    /// Positions held by the shared cache (the longest running row, padding trimmed).
    pub fn cached_positions(&self) -> usize {
        self.cache.as_ref().map_or(0, ModelCache::seq_len)
    }

    /// Prefills `prompt` and picks its first token; the sequence then runs with the batch
    /// unless that token already ended it (the returned event has `finish` set).
    ///
    /// `params.max_tokens` is capped by the room left in the model's context. The sampler is
    /// seeded with `params.sampling.seed` (as row 0 of [`Engine::generate_batch`]).
    ///
    /// # Errors
    /// [`EngineError::Request`] for an empty prompt, one that fills the context, an id
    /// already running or `max_tokens` of 0; model errors. On error the batch is unchanged.
    pub fn add(
        &mut self,
        id: u64,
        prompt: &[u32],
        params: &GenerateParams,
    ) -> Result<SequenceEvent> {
        self.add_marked(id, prompt, params, None)
    }

    /// [`DecodeBatch::add`], with where the copy prior copies from in the prompt
    /// ([`PromptMarks`]: the lines its action names, the state it is held to).
    ///
    /// # Errors
    /// As [`DecodeBatch::add`].
    pub fn add_marked(
        &mut self,
        id: u64,
        prompt: &[u32],
        params: &GenerateParams,
        marks: Option<&PromptMarks>,
    ) -> Result<SequenceEvent> {
        let engine = self.engine;
        let context = engine.max_context();
        engine.check_prompt(prompt)?;
        if params.max_tokens == 0 {
            return Err(EngineError::Request("max_tokens must be at least 1".into()));
        }
        if self.rows.iter().any(|r| r.id == id) {
            return Err(EngineError::Request(format!(
                "sequence {id} is already running"
            )));
        }
        let mut cache = engine.model.new_cache(1, engine.device());
        let logits = engine
            .model
            .forward_last(&TokenBatch::single(prompt.to_vec()), Some(&mut cache))?;
        let mut samplers = vec![engine.sampler(params.sampling, prompt, marks)];
        let token = engine.pick(logits, &[0], &mut samplers)?[0];
        let mut row = Row {
            id,
            stream: engine.tokenizer.decode_stream(true),
            generated: 0,
            limit: params.max_tokens.min(context - prompt.len()),
            next: token,
        };
        let event = accept(engine, &mut row, token)?;
        if event.finish.is_some() {
            return finish(row, event);
        }
        self.cache = Some(match self.cache.take() {
            Some(running) => ModelCache::concat(vec![running, cache]),
            None => cache,
        });
        self.rows.push(row);
        self.samplers.append(&mut samplers);
        Ok(event)
    }

    /// Feeds every running sequence its last token and picks the next one, in one forward
    /// pass. Sequences that end (stop token or `max_tokens`) leave the batch.
    ///
    /// Returns one event per sequence that was running, in row order.
    ///
    /// # Errors
    /// Model or tokenizer errors; the batch is then left empty (its sequences cannot go on).
    pub fn step(&mut self) -> Result<Vec<SequenceEvent>> {
        let Some(cache) = self.cache.as_mut() else {
            return Ok(Vec::new());
        };
        let engine = self.engine;
        let batch = TokenBatch {
            ids: self.rows.iter().map(|r| vec![r.next]).collect(),
            valid: None,
        };
        let tokens = match engine
            .model
            .forward_last(&batch, Some(cache))
            .map_err(EngineError::from)
        {
            Ok(logits) => {
                let all: Vec<usize> = (0..self.rows.len()).collect();
                engine.pick(logits, &all, &mut self.samplers)
            }
            Err(e) => Err(e),
        };
        let tokens = match tokens {
            Ok(t) => t,
            Err(e) => {
                self.clear();
                return Err(e);
            }
        };
        let mut events = Vec::with_capacity(self.rows.len());
        for (row, token) in self.rows.iter_mut().zip(tokens) {
            row.next = token;
            match accept(engine, row, token) {
                Ok(event) => events.push(event),
                Err(e) => {
                    self.clear();
                    return Err(e);
                }
            }
        }
        let keep: Vec<usize> = (0..events.len())
            .filter(|&i| events[i].finish.is_none())
            .collect();
        if keep.len() < self.rows.len() {
            let rows = std::mem::take(&mut self.rows);
            for (i, row) in rows.into_iter().enumerate() {
                if events[i].finish.is_some() {
                    let event = std::mem::replace(&mut events[i], empty_event(row.id));
                    events[i] = finish(row, event)?;
                } else {
                    self.rows.push(row);
                }
            }
            self.keep_rows(&keep);
        }
        Ok(events)
    }

    /// Removes a running sequence at once (its client went away); `false` if it is not
    /// running. Its cache rows are freed before the next step.
    pub fn cancel(&mut self, id: u64) -> bool {
        let Some(pos) = self.rows.iter().position(|r| r.id == id) else {
            return false;
        };
        self.rows.remove(pos);
        let keep: Vec<usize> = (0..=self.rows.len()).filter(|&i| i != pos).collect();
        self.keep_rows(&keep);
        true
    }

    /// Drops every sequence.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.samplers.clear();
        self.cache = None;
    }

    /// Keeps the cache rows and samplers at `keep` (indices before the change).
    fn keep_rows(&mut self, keep: &[usize]) {
        let mut samplers = std::mem::take(&mut self.samplers);
        let mut kept = Vec::with_capacity(keep.len());
        for (i, s) in samplers.drain(..).enumerate() {
            if keep.contains(&i) {
                kept.push(s);
            }
        }
        self.samplers = kept;
        if keep.is_empty() {
            self.cache = None;
        } else if let Some(cache) = self.cache.as_mut() {
            cache.retain(keep);
            cache.trim_padding();
        }
    }
}

/// Records `token` for `row` and says whether the sequence ended.
fn accept<B: Backend>(engine: &Engine<B>, row: &mut Row<'_>, token: u32) -> Result<SequenceEvent> {
    let mut event = empty_event(row.id);
    if engine.stop_ids.contains(&token) {
        event.finish = Some(FinishReason::Stop);
        return Ok(event);
    }
    event.token = Some(token);
    row.generated += 1;
    if let Some(piece) = row.stream.step(token)? {
        event.text = piece;
    }
    if row.generated >= row.limit {
        event.finish = Some(FinishReason::Length);
    }
    Ok(event)
}

/// Completes the last event of a finished row with the text its stream still held.
fn finish(row: Row<'_>, mut event: SequenceEvent) -> Result<SequenceEvent> {
    if let Some(rest) = row.stream.finish()? {
        event.text.push_str(&rest);
    }
    Ok(event)
}

fn empty_event(id: u64) -> SequenceEvent {
    SequenceEvent {
        id,
        token: None,
        text: String::new(),
        finish: None,
    }
}
