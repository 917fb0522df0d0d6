//! The files of a model directory, held in memory (for the browser, for an embedded model, or
//! for tests), and the optional `agentworld.json` card.
//!
//! A model directory is a standard Hugging Face folder: `config.json`, `model.safetensors` (or
//! shards plus `model.safetensors.index.json`), `tokenizer.json`, and the chat template as
//! `chat_template.jinja` or inside `tokenizer_config.json`; `generation_config.json` is
//! optional. Our own models add `agentworld.json` (see [`ModelCard`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `agentworld.json`: what a model made by this project says about itself.
///
/// Every field is optional, so checkpoints from elsewhere (which have no card) and cards from
/// newer versions both load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelCard {
    /// Short model name (`agentworld-demo`).
    pub name: String,
    /// One-paragraph description.
    pub description: String,
    /// Per domain (`android`, ...), the state representation the model was trained on
    /// (`android-compact`); states given in another format are converted to it first.
    pub state_formats: BTreeMap<String, String>,
    /// A folder inside the model directory holding `<domain>/system_prompt.txt`: the system
    /// prompts the model was trained with.
    pub prompts_dir: Option<String>,
    /// Sensible `max_tokens` for one observation.
    pub max_new_tokens: Option<usize>,
    /// The copy prior ([`crate::sampling::SamplingParams::copy_bias`]) this model
    /// is decoded with when the caller sets none: a logit bonus, in nats, for the token that
    /// continues the span of the prompt being copied.
    pub copy_bias: Option<f32>,
    /// Per domain (`terminal`, ...), a copy prior in place of [`Self::copy_bias`]: a terminal
    /// screen changes more from step to step than a GUI tree, so it is best copied less
    /// firmly. Read through [`Self::copy_bias_for`].
    pub copy_bias_by_domain: BTreeMap<String, f32>,
    /// Probability the model's own top token needs to be weighed against the copy prior's
    /// continuation; below it the continuation is picked outright
    /// ([`crate::sampling::CopyPrior::outright_below`]). Unset: always weighed
    /// (a plain bonus). Applies wherever a copy prior is on.
    pub copy_confidence: Option<f32>,
    /// Most tokens this model's reasoning (`<think>` … `</think>`) is given before `</think>`
    /// is written for it ([`crate::sampling::Sampler::with_thinking_budget`]);
    /// unset: no limit. A small model's reasoning can loop until `max_tokens`, leaving no
    /// observation at all.
    pub thinking_budget: Option<usize>,
    /// Span (tokens) of the loop guard an output decoded without a copy prior is generated
    /// with after its reasoning ([`crate::sampling::LoopGuard`]): no span of this
    /// many tokens is written more often than the prompt holds it. Unset: no guard. Where a
    /// copy prior runs it does not apply: the prior never favours a prompt position twice,
    /// and on the demo model's Android trees the guard cost node F1 (0.933 → 0.917 on held-out
    /// rows 100–149).
    pub loop_guard: Option<usize>,
    /// Per domain, the copy prior (nats) on the lines of the state the action names (the
    /// element it acts on, `agentworld_world::action::named_lines`), in place of the
    /// domain's [`Self::copy_bias_for`] there
    /// ([`crate::sampling::CopyPrior::named`]). A domain not listed: those lines
    /// are copied as firmly as the rest. Read through [`Self::named_copy_bias_for`].
    pub named_copy_bias_by_domain: BTreeMap<String, f32>,
    /// Per domain, what the copy prior may copy from ([`CopyFrom`]); a domain not listed:
    /// the whole prompt. Read through [`Self::copies_state_only`].
    pub copy_sources_by_domain: BTreeMap<String, CopyFrom>,
    /// Domains whose reasoning opens with the element the action names: where the rendered
    /// prompt ends with the opened reasoning (`<think>\n`), [`crate::encode_prompt_marks`]
    /// appends `Target: <the element's line>\n` (`agentworld_world::action::target_lead`) for
    /// the model to continue, as the model was trained
    /// (`agentworld_data::ground_thinking`). The lead is part of the prompt, so a
    /// generation's reasoning text starts after it. Empty: none (the shipped demo model; the
    /// option was tried and not kept: docs/demo-model-research-log.md, (l)).
    pub target_in_thinking: Vec<String>,
    /// Per domain, a marker written at the start of each line of the current state that the
    /// action names (`agentworld_world::action::mark_named_in_prompt`), as the model was
    /// trained: the model reads which line changes where it copies it. The marker is for the
    /// model alone; the copy prior skips it ([`crate::PromptMarks::inserted`]). A domain not
    /// listed: no marker. Read through [`Self::line_marker_for`].
    pub line_marker_by_domain: BTreeMap<String, String>,
    /// Per domain, what the model writes as its observation
    /// ([`agentworld_world::diff::ObservationForm`]): `patch`, only the lines that change, which
    /// the world layer applies to the current state (`agentworld_world::diff::apply_patch`);
    /// a domain not listed: the whole next state (`full`, as Qwen-AgentWorld writes). Read
    /// through [`Self::observation_form_for`].
    pub observation_form_by_domain: BTreeMap<String, agentworld_world::diff::ObservationForm>,
    /// Domains the model was trained on.
    pub domains: Vec<String>,
    /// How the model was made (free-form: data, steps, seed, command).
    pub training: Option<serde_json::Value>,
    /// Held-out figures (free-form, written by `agentworld eval`).
    pub evaluation: Option<serde_json::Value>,
}

impl ModelCard {
    /// The copy prior (nats) this model is decoded with in `domain` (`None`: domain unknown):
    /// the domain's entry in [`Self::copy_bias_by_domain`], else [`Self::copy_bias`], else 0.
    pub fn copy_bias_for(&self, domain: Option<&str>) -> f32 {
        domain
            .and_then(|d| self.copy_bias_by_domain.get(d).copied())
            .or(self.copy_bias)
            .unwrap_or(0.0)
    }

    /// Whether the copy prior copies only the current state in `domain`
    /// ([`Self::copy_sources_by_domain`] says [`CopyFrom::State`]).
    pub fn copies_state_only(&self, domain: &str) -> bool {
        self.copy_sources_by_domain.get(domain) == Some(&CopyFrom::State)
    }

    /// The marker for the lines the action names in `domain`
    /// ([`Self::line_marker_by_domain`]); `None` when the domain has none, or it is empty.
    pub fn line_marker_for(&self, domain: &str) -> Option<&str> {
        self.line_marker_by_domain
            .get(domain)
            .map(String::as_str)
            .filter(|m| !m.is_empty())
    }

    /// What the model writes as its observation in `domain` (`None`: unknown, the whole
    /// state) ([`Self::observation_form_by_domain`]).
    pub fn observation_form_for(
        &self,
        domain: Option<&str>,
    ) -> agentworld_world::diff::ObservationForm {
        domain
            .and_then(|d| self.observation_form_by_domain.get(d).copied())
            .unwrap_or_default()
    }

    /// The copy prior (nats) on the lines the action names in `domain`
    /// ([`Self::named_copy_bias_by_domain`]); `None` when the domain has none or is unknown.
    pub fn named_copy_bias_for(&self, domain: Option<&str>) -> Option<f32> {
        domain.and_then(|d| self.named_copy_bias_by_domain.get(d).copied())
    }
}

/// What the copy prior of a domain copies from ([`ModelCard::copy_sources_by_domain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyFrom {
    /// Any span of the prompt (the default): a GUI tree's lines repeat across the history, and
    /// a lost copy finds its place again wherever it matches.
    Prompt,
    /// The current state only, to its end, then the command the shell echoes
    /// ([`crate::sampling::CopyPrior::sources`]): a terminal screen only grows, so
    /// the next one starts as the old one copied whole, and what follows is new.
    State,
}

/// Every file of a model directory, in memory.
#[derive(Debug, Clone, Default)]
pub struct ModelFiles {
    /// `config.json` text.
    pub config_json: String,
    /// Safetensors shards as `(file name, bytes)`.
    pub shards: Vec<(String, Vec<u8>)>,
    /// `model.safetensors.index.json` text, for sharded checkpoints.
    pub index_json: Option<String>,
    /// `tokenizer.json` bytes.
    pub tokenizer_json: Vec<u8>,
    /// `tokenizer_config.json` bytes (special tokens; maybe the chat template).
    pub tokenizer_config_json: Option<Vec<u8>>,
    /// `chat_template.jinja` text; takes precedence over `tokenizer_config.json`.
    pub chat_template: Option<String>,
    /// `generation_config.json` bytes.
    pub generation_config_json: Option<Vec<u8>>,
    /// `agentworld.json`, parsed.
    pub card: Option<ModelCard>,
    /// Other small text files by relative path (e.g. `prompts/terminal/system_prompt.txt`).
    pub extra: BTreeMap<String, String>,
}

impl ModelFiles {
    /// The largest tensor of the checkpoint as a device holds it in f32: its name and size in
    /// bytes (`None` when no shard has a readable safetensors header). The in-browser engine
    /// compares it with the WebGPU adapter's buffer limits ([`check_buffer_limit`]).
    pub fn largest_tensor_f32(&self) -> Option<(String, u64)> {
        self.shards
            .iter()
            .filter_map(|(_, bytes)| {
                let (_, metadata) = safetensors::SafeTensors::read_metadata(bytes).ok()?;
                metadata
                    .tensors()
                    .into_iter()
                    .map(|(name, info)| {
                        let elements: u64 = info.shape.iter().map(|&d| d as u64).product();
                        (name, elements * 4)
                    })
                    .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            })
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    }
}

/// Whether a tensor of `need` bytes fits one device buffer of at most `allow` bytes (WebGPU's
/// `maxStorageBufferBindingSize` / `maxBufferSize`, whichever is smaller).
///
/// # Errors
/// `"<tensor> needs N MB, this device allows M MB per buffer"` when it does not fit (MB =
/// 2^20 bytes, rounded up for the need and down for the limit).
pub fn check_buffer_limit(tensor: &str, need: u64, allow: u64) -> Result<(), String> {
    if need <= allow {
        return Ok(());
    }
    Err(format!(
        "{tensor} needs {} MB, this device allows {} MB per buffer",
        need.div_ceil(1 << 20),
        allow >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(tensors: &[(&str, &[usize])]) -> Vec<u8> {
        let mut header = serde_json::Map::new();
        let mut offset = 0;
        for (name, shape) in tensors {
            let bytes = shape.iter().product::<usize>() * 2;
            header.insert(
                name.to_string(),
                serde_json::json!({"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + bytes]}),
            );
            offset += bytes;
        }
        let header = serde_json::Value::Object(header).to_string();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header.as_bytes());
        out.resize(out.len() + offset, 0);
        out
    }

    #[test]
    fn the_largest_tensor_is_found_across_shards_and_sized_in_f32() {
        let files = ModelFiles {
            shards: vec![
                (
                    "a.safetensors".into(),
                    shard(&[("small", &[4, 4]), ("embed", &[64, 8])]),
                ),
                ("b.safetensors".into(), shard(&[("lm_head", &[64, 16])])),
                ("broken.safetensors".into(), b"not a checkpoint".to_vec()),
            ],
            ..ModelFiles::default()
        };
        assert_eq!(
            files.largest_tensor_f32(),
            Some(("lm_head".into(), 64 * 16 * 4))
        );
        assert_eq!(ModelFiles::default().largest_tensor_f32(), None);
    }

    #[test]
    fn a_domain_copy_bias_overrides_the_card_default() {
        let card: ModelCard =
            serde_json::from_str(r#"{"copy_bias": 15, "copy_bias_by_domain": {"terminal": 0}}"#)
                .unwrap();
        assert_eq!(card.copy_bias_for(Some("terminal")), 0.0);
        assert_eq!(card.copy_bias_for(Some("web")), 15.0);
        assert_eq!(card.copy_bias_for(None), 15.0);
        assert_eq!(ModelCard::default().copy_bias_for(Some("web")), 0.0);
    }

    #[test]
    fn a_tensor_over_the_buffer_limit_is_refused_with_both_sizes() {
        assert!(check_buffer_limit("w", 1 << 20, 1 << 20).is_ok());
        let err = check_buffer_limit("model.embed_tokens.weight", 3 * (1 << 20) + 1, 1 << 20)
            .unwrap_err();
        assert_eq!(
            err,
            "model.embed_tokens.weight needs 4 MB, this device allows 1 MB per buffer"
        );
    }
}
