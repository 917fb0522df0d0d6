//! [`Engine`]: a loaded checkpoint with its tokenizer, chat template and stop tokens.

use std::ops::Range;

use crate::sampling::{CopyPrior, LoopGuard, Sampler, SamplingParams};
use agentworld_model::loader::{self, LayoutReport};
use agentworld_model::{Checkpoint, LoadOptions, Qwen35Moe, Qwen35MoeConfig};
use agentworld_text::observation::{OBSERVATION_CLOSE, OBSERVATION_OPEN};
use agentworld_text::{ChatTemplate, GenerationConfig, RenderOptions, Tokenizer};
use burn::tensor::backend::Backend;
use serde::Serialize;

use crate::error::{EngineError, Result};
use crate::files::{ModelCard, ModelFiles};
use crate::marks::PromptMarks;

/// A model ready to generate: weights on a device, tokenizer, chat template, stop ids.
#[derive(Debug)]
pub struct Engine<B: Backend> {
    /// The network.
    pub model: Qwen35Moe<B>,
    /// Its configuration.
    pub config: Qwen35MoeConfig,
    /// The checkpoint's tokenizer.
    pub tokenizer: Tokenizer,
    /// The checkpoint's chat template.
    pub template: ChatTemplate,
    /// Ids that end generation (`<|im_end|>`, `<|endoftext|>`, config and generation-config eos).
    pub stop_ids: Vec<u32>,
    /// `generation_config.json`, or defaults.
    pub generation_config: GenerationConfig,
    /// `agentworld.json`, if the model has one.
    pub card: Option<ModelCard>,
    /// What the loader found in the checkpoint.
    pub layout: LayoutReport,
    /// The precision the weights are held in (f32 for a model handed over in memory).
    pub weights: LoadOptions,
    pub(crate) device: B::Device,
    /// The ids whose text holds a newline, found on first use ([`Engine::line_break_ids`]).
    line_breaks: std::sync::OnceLock<Vec<u32>>,
}

impl<B: Backend> Engine<B> {
    /// Loads a Hugging Face model directory (weights memory-mapped).
    ///
    /// `progress(done, total)` is called as tensors load.
    ///
    /// # Errors
    /// Any missing or malformed file, named.
    #[cfg(feature = "native")]
    pub fn load_dir(
        dir: &std::path::Path,
        device: &B::Device,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self> {
        Self::load_dir_with(dir, device, LoadOptions::default(), progress)
    }

    /// [`Self::load_dir`] with the weights held as `options` says (dtype, int8), read from the
    /// mapped files straight into that precision ([`loader::load_model_with`]).
    ///
    /// # Errors
    /// As [`Self::load_dir`]; int8 on a GPU backend.
    #[cfg(feature = "native")]
    pub fn load_dir_with(
        dir: &std::path::Path,
        device: &B::Device,
        options: LoadOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self> {
        let (config, checkpoint) = loader::open_dir(dir)?;
        let tokenizer_path = dir.join("tokenizer.json");
        if !tokenizer_path.is_file() {
            return Err(EngineError::File {
                path: tokenizer_path.display().to_string(),
                message: "missing: a model directory needs its tokenizer.json".into(),
            });
        }
        let tokenizer = Tokenizer::from_file(&tokenizer_path)?;
        let template = ChatTemplate::from_dir(dir)?;
        let generation_config = match std::fs::read(dir.join("generation_config.json")) {
            Ok(bytes) => GenerationConfig::from_bytes(&bytes)?,
            Err(_) => GenerationConfig::default(),
        };
        let card = match std::fs::read_to_string(dir.join("agentworld.json")) {
            Ok(text) => Some(serde_json::from_str(&text).map_err(|e| EngineError::File {
                path: dir.join("agentworld.json").display().to_string(),
                message: e.to_string(),
            })?),
            Err(_) => None,
        };
        Self::assemble(
            config,
            &checkpoint,
            tokenizer,
            template,
            generation_config,
            card,
            device,
            options,
            progress,
        )
    }

    /// Loads a model from files held in memory (browser, embedded model, tests).
    ///
    /// # Errors
    /// Any malformed file, named.
    pub fn from_files(
        files: &ModelFiles,
        device: &B::Device,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self> {
        Self::from_files_with(files, device, LoadOptions::default(), progress)
    }

    /// [`Self::from_files`] with the weights held as `options` says (the browser holds f16
    /// where the adapter has `shader-f16`).
    ///
    /// # Errors
    /// As [`Self::from_files`].
    pub fn from_files_with(
        files: &ModelFiles,
        device: &B::Device,
        options: LoadOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self> {
        let config = Qwen35MoeConfig::from_json_str(&files.config_json, "config.json")?;
        let checkpoint = Checkpoint::from_bytes(files.shards.clone(), files.index_json.as_deref())?;
        let tokenizer = Tokenizer::from_bytes(&files.tokenizer_json)?;
        let specials = match &files.tokenizer_config_json {
            Some(bytes) => agentworld_text::special_tokens_from_tokenizer_config(bytes)?,
            None => Vec::new(),
        };
        let template = match (&files.chat_template, &files.tokenizer_config_json) {
            (Some(source), _) => ChatTemplate::new(source.clone())?.with_special_tokens(specials),
            (None, Some(bytes)) => ChatTemplate::from_tokenizer_config(bytes)?,
            (None, None) => {
                return Err(EngineError::File {
                    path: "chat_template.jinja".into(),
                    message: "missing: neither chat_template.jinja nor tokenizer_config.json given"
                        .into(),
                });
            }
        };
        let generation_config = match &files.generation_config_json {
            Some(bytes) => GenerationConfig::from_bytes(bytes)?,
            None => GenerationConfig::default(),
        };
        Self::assemble(
            config,
            &checkpoint,
            tokenizer,
            template,
            generation_config,
            files.card.clone(),
            device,
            options,
            progress,
        )
    }

    /// An engine over a model already in memory (a model being trained, for the training
    /// probe's generations): no checkpoint behind it, so `layout` describes nothing
    /// (no shards, no tensors) and there is no model card; generation defaults.
    pub fn from_model(
        model: Qwen35Moe<B>,
        config: Qwen35MoeConfig,
        tokenizer: Tokenizer,
        template: ChatTemplate,
        device: &B::Device,
    ) -> Self {
        let stop_ids = tokenizer.stop_token_ids(&config.eos_token_ids());
        Self {
            model,
            config,
            tokenizer,
            template,
            stop_ids,
            generation_config: GenerationConfig::default(),
            card: None,
            layout: LayoutReport {
                prefix: "model.".into(),
                experts: loader::ExpertLayout::Fused,
                shards: Vec::new(),
                dtypes: Vec::new(),
                data_bytes: 0,
                skipped: Vec::new(),
                unused: Vec::new(),
                warnings: Vec::new(),
            },
            weights: LoadOptions::default(),
            device: device.clone(),
            line_breaks: std::sync::OnceLock::new(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        config: Qwen35MoeConfig,
        checkpoint: &Checkpoint,
        tokenizer: Tokenizer,
        template: ChatTemplate,
        generation_config: GenerationConfig,
        card: Option<ModelCard>,
        device: &B::Device,
        options: LoadOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self> {
        let (model, layout) =
            loader::load_model_with::<B>(checkpoint, &config, device, options, progress)?;
        let mut extra: Vec<u32> = config.eos_token_ids();
        extra.extend(&generation_config.eos_token_id);
        let stop_ids = tokenizer.stop_token_ids(&extra);
        Ok(Self {
            model,
            config,
            tokenizer,
            template,
            stop_ids,
            generation_config,
            card,
            layout,
            weights: options,
            line_breaks: std::sync::OnceLock::new(),
            device: device.clone(),
        })
    }

    /// The device the weights live on.
    pub fn device(&self) -> &B::Device {
        &self.device
    }

    /// Longest sequence (prompt plus output) the model accepts.
    pub fn max_context(&self) -> usize {
        self.config.max_position_embeddings
    }

    /// The sampler of one continuation of `prompt`: `params`, with the copy prior over the
    /// prompt when `params.copy_bias` is set. The stop tokens are never favoured while the
    /// output copies; where the copy reaches the end of a turn, `</predicted_observation>` and
    /// then `<|im_end|>` are (when the tokenizer has the tag as one token, as the demo model's
    /// does): the copied state has ended, so does the block and the turn. When the prompt
    /// leaves a `<think>` block open (the template started the reasoning) the prior waits for
    /// `</think>`, and the model card's `thinking_budget` applies (when it runs out, or when
    /// the model opens its observation or ends its turn inside the reasoning, `</think>` and
    /// the observation's opening tag are written for the model). The card's
    /// `copy_confidence` gates the prior; without a prior, its `loop_guard` sets a
    /// [`LoopGuard`] on the output after the reasoning. With both tags as single tokens, the
    /// end of the turn follows `</predicted_observation>` (after the reasoning) in every case,
    /// and a turn that would end inside an open block closes it first.
    /// `marks` ([`PromptMarks`]): the lines of the state the action names, copied under their
    /// own bias ([`CopyPrior::named`], with [`CopyPrior::line_breaks`]), and the state the copy
    /// is held to ([`CopyPrior::sources`], then [`CopyPrior::then`]; the loop guard then runs
    /// beside the prior, on what the model writes itself). Sources that found no state: no
    /// prior, the loop guard only.
    pub(crate) fn sampler(
        &self,
        params: SamplingParams,
        prompt: &[u32],
        marks: Option<&PromptMarks>,
    ) -> Sampler {
        let mut sampler = Sampler::new(params);
        let think_close = match (
            self.tokenizer.token_to_id("<think>"),
            self.tokenizer.token_to_id("</think>"),
        ) {
            (Some(open), Some(close)) => {
                let last = |id: u32| prompt.iter().rposition(|&t| t == id);
                last(open)
                    .filter(|&o| last(close).is_none_or(|c| c < o))
                    .map(|_| close)
            }
            _ => None,
        };
        if let (Some(close), Some(budget)) = (
            think_close,
            self.card.as_ref().and_then(|c| c.thinking_budget),
        ) {
            // The close and the start of the observation block, as a well-formed output has
            // them (`</think>\n\n<predicted_observation>\n`).
            let mut forced = vec![close];
            if let Ok(rest) = self.tokenizer.encode(&format!("\n\n{OBSERVATION_OPEN}\n")) {
                forced.extend(rest);
            }
            // An observation (or the end of the turn) inside the reasoning closes it first.
            let answer: Vec<u32> = [OBSERVATION_OPEN, OBSERVATION_CLOSE]
                .iter()
                .filter_map(|t| self.tokenizer.token_to_id(t))
                .chain(self.stop_ids.iter().copied())
                .collect();
            // One reasoning an output: its close is not written twice. (With the budget
            // only: a sampler that watches every token reads the logits back, which a
            // greedy run of a checkpoint without a card need not.)
            sampler = sampler
                .with_thinking_budget(&forced, budget)
                .closing_before(&answer)
                .at_most_once(close);
        }
        let observation_close = self.tokenizer.token_to_id(OBSERVATION_CLOSE);
        let end_of_turn = self
            .tokenizer
            .token_to_id("<|im_end|>")
            .filter(|id| self.stop_ids.contains(id));
        if let (Some(close), Some(end)) = (observation_close, end_of_turn) {
            // One block a turn: the turn ends where the block does, and not inside it.
            sampler = sampler.with_end_after(think_close, close, end);
            if let Some(open) = self.tokenizer.token_to_id(OBSERVATION_OPEN) {
                sampler = sampler.closing_open_block(open);
            }
        }
        // The copy prior and the loop guard read the prompt without the markers written for
        // the model alone, and the marks' ranges move with it.
        let unmarked = marks
            .filter(|m| !m.inserted.is_empty())
            .map(|m| without_positions(prompt, m));
        let (prompt, marks) = match &unmarked {
            Some((p, m)) => (p.as_slice(), Some(m)),
            None => (prompt, marks),
        };
        let sources = marks.and_then(|m| m.sources.as_deref());
        let guard = self.card.as_ref().and_then(|c| c.loop_guard).map(|n| {
            let guard = LoopGuard::new(prompt, n);
            match think_close {
                Some(close) => guard.after(close),
                None => guard,
            }
        });
        // A prior on the named lines alone runs with copy_bias 0 (`--copy-bias 0
        // --named-copy-bias N`: a patch copies the line it edits, and writes the rest itself).
        let named_only =
            marks.is_some_and(|m| m.named_bias.is_some_and(|b| b != 0.0) && !m.named.is_empty());
        if (params.copy_bias == 0.0 && !named_only) || sources.is_some_and(<[_]>::is_empty) {
            // No copy prior (which never favours a prompt position twice): the loop guard.
            if let Some(guard) = guard {
                sampler = sampler.with_loop_guard(guard);
            }
            return sampler;
        }
        let mut prior = CopyPrior::new(prompt, &self.stop_ids);
        if let Some(close) = observation_close {
            let tokens: Vec<u32> = std::iter::once(close).chain(end_of_turn).collect();
            prior = prior.closed_by(&tokens);
        }
        if let Some(close) = think_close {
            prior = prior.after(close);
        }
        if let Some(confidence) = self.card.as_ref().and_then(|c| c.copy_confidence) {
            prior = prior.outright_below(confidence);
        }
        if let Some(m) = marks
            && let Some(bias) = m.named_bias
            && !m.named.is_empty()
        {
            prior = prior
                .named(&m.named, bias)
                .line_breaks(self.line_break_ids());
            if m.edits_named {
                prior = prior.edits_named();
            }
        }
        if let (Some(m), Some(sources)) = (marks, sources) {
            // The copy ends with the state; what the model writes after it is guarded.
            prior = prior.sources(sources).then(&m.then);
            if let Ok(open) = self.tokenizer.encode(&format!("{OBSERVATION_OPEN}\n")) {
                // The state is copied from its first token on, once its block opens.
                prior = prior.opened_by(&open);
            }
            if let Some(guard) = guard {
                sampler = sampler.with_loop_guard(guard);
            }
        }
        sampler.with_copy_prior(prior)
    }

    /// The ids whose text holds a newline (each id decoded alone), computed once.
    pub fn line_break_ids(&self) -> &[u32] {
        self.line_breaks.get_or_init(|| {
            (0..self.tokenizer.vocab_size() as u32)
                .filter(|&id| {
                    self.tokenizer
                        .decode(&[id], false)
                        .is_ok_and(|t| t.contains('\n'))
                })
                .collect()
        })
    }

    /// Checks that a prompt can start a generation: not empty, and shorter than the context.
    ///
    /// # Errors
    /// [`EngineError::Request`] saying which, with the prompt's length and the context.
    pub(crate) fn check_prompt(&self, prompt: &[u32]) -> Result<()> {
        let context = self.max_context();
        if prompt.is_empty() {
            return Err(EngineError::Request("the prompt is empty".into()));
        }
        if prompt.len() >= context {
            return Err(EngineError::Request(format!(
                "the prompt has {} tokens; this model's context is {context} tokens",
                prompt.len()
            )));
        }
        Ok(())
    }

    /// Renders messages with the checkpoint's chat template, ending with the generation prompt.
    ///
    /// `enable_thinking` is passed to the template as is (`None`: the template's default).
    ///
    /// # Errors
    /// [`EngineError::Text`] if the template rejects the conversation.
    pub fn render_prompt<M: Serialize>(
        &self,
        messages: &[M],
        enable_thinking: Option<bool>,
    ) -> Result<String> {
        let mut options = RenderOptions::new().with_generation_prompt(true);
        options.enable_thinking = enable_thinking;
        Ok(self.template.render(messages, &options)?)
    }

    /// Tokenizes a rendered prompt as [`Engine::encode`] does, and gives the token ranges of
    /// `marked` (byte ranges of `text`, such as the lines of the state an action names):
    /// [`Tokenizer::encode_marked`].
    ///
    /// # Errors
    /// [`EngineError::Text`] on tokenizer failure.
    pub fn encode_marked(
        &self,
        text: &str,
        marked: &[Range<usize>],
    ) -> Result<(Vec<u32>, Vec<Range<usize>>)> {
        Ok(self.tokenizer.encode_marked(text, marked)?)
    }

    /// Tokenizes a rendered prompt.
    ///
    /// # Errors
    /// [`EngineError::Text`] on tokenizer failure.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self.tokenizer.encode(text)?)
    }
}

/// `prompt` without the token positions of `marks.inserted`, and `marks` with its ranges
/// moved to match (a range keeps the positions left in it).
fn without_positions(prompt: &[u32], marks: &PromptMarks) -> (Vec<u32>, PromptMarks) {
    let skip = &marks.inserted;
    let kept: Vec<u32> = prompt
        .iter()
        .enumerate()
        .filter(|(i, _)| skip.binary_search(i).is_err())
        .map(|(_, &t)| t)
        .collect();
    let at = |i: usize| i - skip.partition_point(|&s| s < i);
    let ranges = |rs: &[std::ops::Range<usize>]| -> Vec<std::ops::Range<usize>> {
        rs.iter()
            .map(|r| at(r.start)..at(r.end))
            .filter(|r| !r.is_empty())
            .collect()
    };
    let moved = PromptMarks {
        named: ranges(&marks.named),
        named_bias: marks.named_bias,
        sources: marks.sources.as_deref().map(ranges),
        then: marks.then.clone(),
        inserted: Vec::new(),
        edits_named: marks.edits_named,
    };
    (kept, moved)
}

#[cfg(test)]
mod marker_tests {
    use super::*;

    #[test]
    fn the_prompt_without_its_markers_keeps_the_marks_in_step() {
        let prompt = [10, 11, 99, 12, 13, 99, 14];
        let marks = PromptMarks {
            named: vec![2..5, 5..7],
            named_bias: Some(0.0),
            sources: Some(vec![0..4, 4..7]),
            then: vec![5],
            inserted: vec![2, 5],
            edits_named: true,
        };
        let (kept, moved) = without_positions(&prompt, &marks);
        assert_eq!(kept, [10, 11, 12, 13, 14]);
        assert_eq!(moved.named, [2..4, 4..5], "each line keeps its own tokens");
        assert_eq!(moved.sources, Some(vec![0..3, 3..5]));
        assert_eq!((moved.then, moved.inserted), (vec![5], vec![]));
        assert!(moved.edits_named);
    }
}
