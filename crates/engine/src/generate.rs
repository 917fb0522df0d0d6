//! The decode loop: prefill the prompt(s), then sample one token per step from the cache until
//! a stop token or `max_tokens`.
//!
//! Several prompts run as one left-padded batch; a sequence that finishes leaves the batch at
//! once (its cache rows are dropped), so the others keep decoding without it. Greedy steps read
//! back only the chosen ids; sampled steps read back the last-position logits.

use std::time::Instant;

use crate::sampling::{Sampler, SamplingParams};
use agentworld_model::TokenBatch;
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
pub use crate::marks::{NamedBias, PromptMarks, encode_prompt_marks, marked_prompt, thinking_lead};

/// Limits and sampling of one generation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenerateParams {
    /// Most tokens to generate (capped by the remaining context).
    pub max_tokens: usize,
    /// Sampling settings; each sequence of a batch gets its own sampler seeded `seed + row`.
    pub sampling: SamplingParams,
}

impl Default for GenerateParams {
    fn default() -> Self {
        Self {
            max_tokens: 512,
            sampling: SamplingParams::greedy(),
        }
    }
}

/// Why a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A stop token was produced (it is not part of the text).
    Stop,
    /// `max_tokens` (or the context) ran out.
    Length,
}

/// The result of one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// Generated text, special tokens skipped except `<think>`-style markup.
    pub text: String,
    /// Generated ids, without the stop token.
    pub token_ids: Vec<u32>,
    /// Prompt length in tokens.
    pub prompt_tokens: usize,
    /// Why it ended.
    pub finish_reason: FinishReason,
    /// Seconds spent on the prompt (first token included).
    pub prefill_secs: f64,
    /// Seconds spent on the remaining tokens.
    pub decode_secs: f64,
}

impl Generation {
    /// Generated tokens per second after the first.
    pub fn decode_tokens_per_sec(&self) -> f64 {
        let n = self.token_ids.len().saturating_sub(1) as f64;
        if self.decode_secs > 0.0 {
            n / self.decode_secs
        } else {
            0.0
        }
    }
}

impl<B: Backend> Engine<B> {
    /// Generates from one prompt, calling `on_text` with each new piece of text as it is decoded.
    ///
    /// # Errors
    /// [`EngineError::Request`] for an empty prompt or one that fills the context;
    /// model or tokenizer errors.
    pub fn generate(
        &self,
        prompt: &[u32],
        params: &GenerateParams,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation> {
        let mut out =
            self.generate_batch_with(&[prompt.to_vec()], params, &mut |_, t| on_text(t))?;
        Ok(out.remove(0))
    }

    /// Generates from several prompts in one batch.
    ///
    /// # Errors
    /// As [`Engine::generate`], for any of the prompts.
    pub fn generate_batch(
        &self,
        prompts: &[Vec<u32>],
        params: &GenerateParams,
    ) -> Result<Vec<Generation>> {
        self.generate_batch_with(prompts, params, &mut |_, _| {})
    }

    /// Generates from several prompts in one batch, calling `on_text(row, text)` as text arrives.
    ///
    /// # Errors
    /// As [`Engine::generate`], for any of the prompts.
    pub fn generate_batch_with(
        &self,
        prompts: &[Vec<u32>],
        params: &GenerateParams,
        on_text: &mut dyn FnMut(usize, &str),
    ) -> Result<Vec<Generation>> {
        self.generate_batch_marked(prompts, &[], params, on_text)
    }

    /// [`Engine::generate_batch_with`], with `marks[i]` where the copy prior copies from in
    /// `prompts[i]` ([`PromptMarks`]) where a copy prior runs. `None` or a missing entry:
    /// nothing marked.
    ///
    /// # Errors
    /// As [`Engine::generate`], for any of the prompts.
    pub fn generate_batch_marked(
        &self,
        prompts: &[Vec<u32>],
        marks: &[Option<PromptMarks>],
        params: &GenerateParams,
        on_text: &mut dyn FnMut(usize, &str),
    ) -> Result<Vec<Generation>> {
        let context = self.max_context();
        for (i, p) in prompts.iter().enumerate() {
            if p.is_empty() {
                return Err(EngineError::Request(format!("prompt {i} is empty")));
            }
            if p.len() >= context {
                return Err(EngineError::Request(format!(
                    "prompt {i} has {} tokens; this model's context is {context} tokens \
                     (max_position_embeddings)",
                    p.len()
                )));
            }
        }
        if prompts.is_empty() {
            return Ok(Vec::new());
        }
        let started = Instant::now();
        let n = prompts.len();
        let pad = self.stop_ids.first().copied().unwrap_or(0);
        let batch = if n == 1 {
            TokenBatch::single(prompts[0].clone())
        } else {
            TokenBatch::left_padded(prompts, pad)
        };
        let mut cache = self.model.new_cache(n, &self.device);
        let mut logits = self.model.forward_last(&batch, Some(&mut cache))?;

        let mut samplers: Vec<Sampler> = (0..n)
            .map(|r| {
                self.sampler(
                    SamplingParams {
                        seed: params.sampling.seed.wrapping_add(r as u64),
                        ..params.sampling
                    },
                    &prompts[r],
                    marks.get(r).and_then(Option::as_ref),
                )
            })
            .collect();
        let mut streams: Vec<_> = (0..n).map(|_| self.tokenizer.decode_stream(true)).collect();
        let mut texts = vec![String::new(); n];
        let mut ids: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut finish = vec![None; n];
        let mut active: Vec<usize> = (0..n).collect();
        let mut first_token_at = vec![0.0f64; n];
        let mut finished_at = vec![0.0f64; n];
        let limits: Vec<usize> = prompts
            .iter()
            .map(|p| params.max_tokens.min(context - p.len()))
            .collect();

        loop {
            let next = self.pick(logits, &active, &mut samplers)?;
            let now = started.elapsed().as_secs_f64();
            let mut still = Vec::with_capacity(active.len());
            let mut fed = Vec::with_capacity(active.len());
            for (&row, tok) in active.iter().zip(next) {
                if ids[row].is_empty() {
                    first_token_at[row] = now;
                }
                if self.stop_ids.contains(&tok) {
                    finish[row] = Some(FinishReason::Stop);
                } else {
                    ids[row].push(tok);
                    if let Some(piece) = streams[row].step(tok)? {
                        texts[row].push_str(&piece);
                        on_text(row, &piece);
                    }
                    if ids[row].len() >= limits[row] {
                        finish[row] = Some(FinishReason::Length);
                    }
                }
                if finish[row].is_some() {
                    finished_at[row] = now;
                } else {
                    still.push(row);
                    fed.push(tok);
                }
            }
            if still.is_empty() {
                break;
            }
            if still.len() != active.len() {
                let keep: Vec<usize> = still
                    .iter()
                    .map(|r| active.iter().position(|a| a == r).expect("active"))
                    .collect();
                cache.retain(&keep);
            }
            active = still;
            let step = TokenBatch {
                ids: fed.iter().map(|&t| vec![t]).collect(),
                valid: None,
            };
            logits = self.model.forward_last(&step, Some(&mut cache))?;
        }

        let mut out = Vec::with_capacity(n);
        for (row, stream) in streams.into_iter().enumerate() {
            if let Some(rest) = stream.finish()? {
                texts[row].push_str(&rest);
                on_text(row, &rest);
            }
            out.push(Generation {
                text: std::mem::take(&mut texts[row]),
                token_ids: std::mem::take(&mut ids[row]),
                prompt_tokens: prompts[row].len(),
                finish_reason: finish[row].expect("every row finishes"),
                prefill_secs: first_token_at[row],
                decode_secs: finished_at[row] - first_token_at[row],
            });
        }
        Ok(out)
    }

    /// Chooses the next token of every active row from `[active, vocab]` logits.
    pub(crate) fn pick(
        &self,
        logits: Tensor<B, 2>,
        active: &[usize],
        samplers: &mut [Sampler],
    ) -> Result<Vec<u32>> {
        if active.iter().all(|&r| samplers[r].is_greedy()) {
            let ids = logits
                .argmax(1)
                .into_data()
                .convert::<i64>()
                .to_vec::<i64>()
                .map_err(data_error)?;
            return Ok(ids.into_iter().map(|i| i as u32).collect());
        }
        let vocab = logits.dims()[1];
        let values = logits
            .into_data()
            .convert::<f32>()
            .to_vec::<f32>()
            .map_err(data_error)?;
        Ok(active
            .iter()
            .enumerate()
            .map(|(i, &row)| samplers[row].sample(&values[i * vocab..(i + 1) * vocab]))
            .collect())
    }
}

fn data_error(e: burn::tensor::DataError) -> EngineError {
    EngineError::Request(format!(
        "reading results back from the device failed: {e:?}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelCard;
    use agentworld_world::Domain;

    const PROMPT: &str = "<|im_start|>system\nYou are a Web World Model.<|im_end|>\n\
        <|im_start|>user\n### Turn 1\n**Action:**\n```json\nclick('14')\n```\n\n\
        **Current State:**\nRootWebArea 'Shop'\n\t[13] textbox 'Name'\n\t[14] button 'Go'\
        <|im_end|>\n<|im_start|>assistant\n<think>\n";

    fn card(domains: &[&str]) -> ModelCard {
        ModelCard {
            state_formats: [("web".to_string(), "axtree".to_string())].into(),
            target_in_thinking: domains.iter().map(|d| d.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_lead_names_the_element_where_the_card_asks_for_it() {
        let on = card(&["web"]);
        assert_eq!(
            thinking_lead(Some(&on), PROMPT, None).as_deref(),
            Some("Target: [14] button 'Go'\n")
        );
        let missing = PROMPT.replace("click('14')", "click('99')");
        assert_eq!(
            thinking_lead(Some(&on), &missing, Some(Domain::Web)).as_deref(),
            Some("Target: none\n")
        );
        // not asked for, no card, or the reasoning not open at the prompt's end
        assert_eq!(thinking_lead(Some(&card(&["os"])), PROMPT, None), None);
        assert_eq!(thinking_lead(None, PROMPT, None), None);
        let closed = format!("{PROMPT}\n</think>\n\n");
        assert_eq!(thinking_lead(Some(&on), &closed, None), None);
    }

    fn demo_tokenizer() -> agentworld_text::Tokenizer {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../public/models/agentworld-demo/tokenizer.json");
        agentworld_text::Tokenizer::from_file(&path).unwrap()
    }

    #[test]
    fn a_marked_prompt_holds_the_marker_as_its_own_token_and_says_where() {
        let tokenizer = demo_tokenizer();
        let mut on = card(&[]);
        on.line_marker_by_domain = [("web".to_string(), "^".to_string())].into();
        let (ids, marks) =
            encode_prompt_marks(&tokenizer, Some(&on), PROMPT, None, NamedBias::Nats(0.0)).unwrap();
        let text = tokenizer.decode(&ids, false).unwrap();
        assert!(
            text.contains("\t[13] textbox 'Name'\n^\t[14] button 'Go'"),
            "{text}"
        );
        let marker = tokenizer.encode("^").unwrap();
        assert_eq!(marks.inserted.len(), 1);
        assert_eq!(ids[marks.inserted[0]..=marks.inserted[0]], marker[..]);
        // Without the marker the ids are the unmarked prompt's, token for token: the copy
        // prior reads a marked line as the model writes it.
        let unmarked: Vec<u32> = (0..ids.len())
            .filter(|i| !marks.inserted.contains(i))
            .map(|i| ids[i])
            .collect();
        assert_eq!(unmarked, tokenizer.encode(PROMPT).unwrap());
        // The named line (for the named bias) starts at its marker and ends with its line.
        let named: Vec<u32> = marks
            .named
            .iter()
            .flat_map(|r| ids[r.clone()].to_vec())
            .collect();
        assert_eq!(
            tokenizer.decode(&named, false).unwrap(),
            "^\t[14] button 'Go'"
        );
        // Another domain, or no marker: nothing inserted.
        let (plain, marks) =
            encode_prompt_marks(&tokenizer, Some(&card(&[])), PROMPT, None, NamedBias::Off)
                .unwrap();
        assert_eq!(
            (plain, marks.inserted),
            (tokenizer.encode(PROMPT).unwrap(), vec![])
        );
        assert!(marked_prompt(Some(&on), PROMPT, Some(Domain::Os)).is_none());
    }

    #[test]
    fn a_patch_form_domain_names_the_typed_text_and_edits_its_named_lines() {
        let tokenizer = demo_tokenizer();
        let fill = PROMPT.replace("click('14')", "fill('13', 'Ada Lovelace')");
        let named_text = |card: &crate::ModelCard| {
            let (ids, marks) =
                encode_prompt_marks(&tokenizer, Some(card), &fill, None, NamedBias::Nats(2.0))
                    .unwrap();
            let texts: Vec<String> = marks
                .named
                .iter()
                .map(|r| tokenizer.decode(&ids[r.clone()], false).unwrap())
                .collect();
            (texts, marks.edits_named)
        };
        let mut patch = card(&[]);
        patch.observation_form_by_domain = [(
            "web".to_string(),
            agentworld_world::diff::ObservationForm::Patch,
        )]
        .into();
        let (texts, edits) = named_text(&patch);
        assert!(edits, "a patch edits its named lines");
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(
            texts[0].contains("Ada Lovelace"),
            "the action's typed text: {texts:?}"
        );
        assert!(texts[1].contains("[13] textbox 'Name'"), "{texts:?}");
        // A whole-state domain: the element's line alone, copied as it is where unchanged.
        let (texts, edits) = named_text(&card(&[]));
        assert!(!edits);
        assert_eq!(texts.len(), 1, "{texts:?}");
        assert!(texts[0].contains("[13] textbox 'Name'"), "{texts:?}");
    }
}
