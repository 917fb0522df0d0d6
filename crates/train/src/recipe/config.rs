//! Every setting of the demo build ([`DemoRecipe`]) and its defaults: the recipe the shipped
//! demo model was trained with.

use std::collections::BTreeMap;

use agentworld_engine::CopyFrom;
use serde::{Deserialize, Serialize};

use crate::trainer::TrainConfig;

/// The marker [`DemoRecipe::mark_named_lines`] writes at the start of a named line: `^`, a byte
/// no state of the training data holds, which the byte-level tokenizer keeps as its own
/// token (no merge learnt from unmarked text joins it).
pub const LINE_MARKER: &str = "^";

/// One stage of [`DemoRecipe::copy_stages`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyStage {
    /// Optimizer steps on this stage's copy examples alone.
    pub steps: usize,
    /// Shortest and longest copied span, in tokens.
    pub span: (usize, usize),
    /// Spans draw from this many of the most frequent completion tokens (0: every learned
    /// token).
    pub vocab: usize,
    /// Spans are windows of real training states ([`crate::dataset::state_copy_examples`])
    /// instead of random tokens (`vocab` is then unused).
    #[serde(default)]
    pub from_states: bool,
}

impl CopyStage {
    /// The [`crate::dataset::Example::domain`] of stage `index`'s examples.
    pub fn domain(index: usize) -> String {
        format!("copy-stage-{}", index + 1)
    }
}

/// Every setting of the demo build.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DemoRecipe {
    /// Seed of data, initialisation and batch order.
    pub seed: u64,
    /// Terminal rows to generate (train and held-out together).
    pub terminal_rows: usize,
    /// Android rows to generate.
    pub android_rows: usize,
    /// Share of the Android training rows cut from made-up screens
    /// ([`agentworld_data::android::screen`]) instead of the dumps (0: none; half
    /// by default, so that remembering the 4 dumps predicts half the rows at most).
    #[serde(default)]
    pub android_synthetic_share: f64,
    /// Web rows to generate.
    pub web_rows: usize,
    /// Share of the Web training rows on made-up sites
    /// ([`agentworld_data::web::made`]) instead of real pages and built-in families
    /// (0: none; half by default).
    #[serde(default)]
    pub web_synthetic_share: f64,
    /// OS (desktop) rows to generate.
    pub os_rows: usize,
    /// Share of the OS training rows on made-up desktops
    /// ([`agentworld_data::os::build::made_up`]) instead of the mini desktop and real
    /// trees (0: none; half by default).
    #[serde(default)]
    pub os_synthetic_share: f64,
    /// Share of the Web and OS training rows that are drills (one edit on a short made-up
    /// form or window: `WebDataConfig::drill_share`, `OsDataConfig::drill_share`), drawn from
    /// the rows not on made-up states (0: none, the default).
    #[serde(default)]
    pub drill_share: f64,
    /// Tokenizer size, added tokens included.
    pub vocab_size: usize,
    /// Examples longer than this many tokens are left out of training.
    pub max_example_tokens: usize,
    /// Auxiliary copy examples of random tokens ([`crate::dataset::copy_examples`]) mixed
    /// with the world-model rows, as a share of their tokens (0 by default: their loss stayed
    /// at chance, ln of the vocabulary, through whole runs).
    pub copy_fraction: f64,
    /// Shortest and longest copied span, in tokens.
    pub copy_span: (usize, usize),
    /// Copied spans draw from this many of the most frequent completion tokens (0: every
    /// learned token).
    #[serde(default)]
    pub copy_vocab: usize,
    /// The copy curriculum: stages of copy examples alone before the world-model rows join,
    /// each with its own span and token set (e.g. short spans of the 32 most frequent tokens
    /// until the induction circuit forms, then the token set doubling each stage, a superset
    /// of the last, so the circuit is kept while new tokens join), or windows of real
    /// training states growing from 8–32 to 64–256 tokens (the default: 500 steps). Random
    /// tokens: jumping from 32 to 256 tokens at once put the copy loss back at chance;
    /// doubling kept it below chance up to 512 tokens, but left the world-model rows less
    /// often well-formed (docs/demo-model.md).
    #[serde(default)]
    pub copy_stages: Vec<CopyStage>,
    /// Model shape (`config.json` fields).
    pub model: serde_json::Value,
    /// Share of the Web, Android and OS training rows whose content words are renamed to
    /// made-up ones ([`agentworld_data::rename`]), so that only copying from the context
    /// predicts them (0: none).
    #[serde(default)]
    pub rename_share: f64,
    /// Whether the thinking of Web and OS training rows with a local edit ends with the
    /// edited lines as they become ([`agentworld_data::restate`]), so that the
    /// observation's edit is a copy from the reasoning (applied after renaming).
    #[serde(default)]
    pub restate_edits: bool,
    /// Domains whose thinking opens with the line of the element the action names
    /// ([`agentworld_data::ground_thinking`], training and held-out rows, after
    /// renaming), written into the card's `target_in_thinking` so the engine writes that line
    /// at decoding too. Empty: none.
    #[serde(default)]
    pub target_in_thinking: Vec<String>,
    /// Domains whose prompts mark the lines the action names with [`LINE_MARKER`] at their
    /// start ([`agentworld_engine::marked_prompt`]), in training, in the probe and, through the
    /// card's `line_marker_by_domain`, at decoding. Empty: none.
    #[serde(default)]
    pub mark_named_lines: Vec<String>,
    /// Domains whose targets are observation patches, only the lines that change
    /// ([`agentworld_world::diff::write_patch`]), in training and in the probe, and, through the
    /// card's `observation_form_by_domain`, applied to the current state wherever the model's
    /// output is read. Empty: none (whole states).
    #[serde(default)]
    pub patch_observations: Vec<String>,
    /// Initial scale of the attention layers' q/k norms ([`agentworld_model::InitOptions::qk_norm_scale`]).
    #[serde(default = "one")]
    pub qk_norm_scale: f64,
    /// Optimisation.
    pub train: TrainConfig,
    /// The copy prior the model is decoded with ([`SamplingParams::copy_bias`], 0: plain
    /// greedy): written into the card, and used by the probe and the final evaluation. 15
    /// nats by default (others per domain: [`Self::copy_bias_by_domain`]): the values that
    /// scored best on held-out rows 150–165 of each domain (docs/demo-model-research-log.md, the copy prior).
    ///
    /// [`SamplingParams::copy_bias`]: agentworld_engine::sampling::SamplingParams::copy_bias
    #[serde(default)]
    pub copy_bias: f32,
    /// Per domain, a copy prior in place of [`Self::copy_bias`] ([`Self::copy_bias_for`]).
    /// 4 nats for Android screens and 15 for terminal screens (held to the screen:
    /// [`Self::copy_sources_by_domain`]) by default.
    #[serde(default)]
    pub copy_bias_by_domain: BTreeMap<String, f32>,
    /// The card's `copy_sources_by_domain`: per domain, what the copy prior copies from
    /// ([`CopyFrom`]). Terminal screens copy their current state only, then the echoed
    /// command, by default (held-out terminal rows 100–149: line F1 0.790 with no prior,
    /// 0.856 at 15 nats held to the screen; docs/demo-model.md).
    #[serde(default)]
    pub copy_sources_by_domain: BTreeMap<String, CopyFrom>,
    /// The card's `copy_confidence`: below this probability of its own top token, the model
    /// is not weighed against the copy prior's continuation, which is picked outright
    /// ([`agentworld_engine::sampling::CopyPrior::outright_below`]; `None`: always weighed).
    /// 0.5 by default, with the 4-nat Android bonus: chosen on held-out rows 100–149 of each
    /// domain (docs/demo-model-research-log.md, the copy prior).
    #[serde(default)]
    pub copy_confidence: Option<f32>,
    /// The card's `loop_guard`: where no copy prior runs, or after a copy held to the state
    /// (terminal screens), no span of this many tokens is written more often than the prompt
    /// holds it
    /// ([`agentworld_engine::sampling::LoopGuard`]; `None`: no guard). 8 by default: chosen
    /// among 4, 6, 8, 16 and 32 on held-out terminal rows 100–149 (docs/demo-model.md).
    #[serde(default)]
    pub loop_guard: Option<usize>,
    /// Held-out rows evaluated per domain.
    pub eval_rows_per_domain: usize,
    /// Rows generated together during evaluation.
    pub eval_batch: usize,
    /// Generation limit during evaluation.
    pub eval_max_tokens: usize,
    /// Save a training checkpoint every this many steps (0: only at the end).
    pub checkpoint_every: usize,
    /// Every this many steps, teacher-forced accuracy on held-out rows
    /// ([`crate::probe::teacher_forced`]) is printed and appended to `<work>/probe.jsonl`
    /// (0: never).
    #[serde(default)]
    pub probe_every: usize,
    /// Held-out rows per domain the probe scores.
    #[serde(default)]
    pub probe_rows_per_domain: usize,
    /// Held-out rows per domain the probe also generates from, greedily as the final
    /// evaluation does, to score well-formed outputs and node F1 while training (0: none).
    /// Teacher-forced accuracy cannot see a generated copy that loops or never closes.
    #[serde(default)]
    pub probe_generated_rows_per_domain: usize,
}

impl Default for DemoRecipe {
    fn default() -> Self {
        Self {
            seed: 7,
            terminal_rows: 2500,
            android_rows: 2500,
            android_synthetic_share: 0.5,
            web_synthetic_share: 0.5,
            os_synthetic_share: 0.5,
            drill_share: 0.0,
            web_rows: 2500,
            os_rows: 2500,
            vocab_size: 4096,
            max_example_tokens: 1400,
            copy_fraction: 0.0,
            copy_span: (16, 320),
            copy_vocab: 0,
            copy_stages: [
                (200, (8, 32)),
                (100, (16, 64)),
                (100, (32, 128)),
                (100, (64, 256)),
            ]
            .into_iter()
            .map(|(steps, span)| CopyStage {
                steps,
                span,
                vocab: 0,
                from_states: true,
            })
            .collect(),
            rename_share: 0.4,
            restate_edits: false,
            target_in_thinking: Vec::new(),
            mark_named_lines: Vec::new(),
            patch_observations: Vec::new(),
            qk_norm_scale: 1.0,
            model: serde_json::json!({
                "hidden_size": 128, "num_hidden_layers": 4,
                "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                "linear_key_head_dim": 32, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
                "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
                "shared_expert_intermediate_size": 128, "max_position_embeddings": 2048,
                "rms_norm_eps": 1e-6, "tie_word_embeddings": false,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}
            }),
            train: TrainConfig {
                steps: 2400,
                learning_rate: 2e-3,
                warmup_steps: 60,
                tokens_per_batch: 2560,
                seed: 7,
                input_noise: 0.1,
                ..Default::default()
            },
            copy_bias: 15.0,
            copy_bias_by_domain: BTreeMap::from([
                ("android".to_string(), 4.0),
                ("terminal".to_string(), 15.0),
            ]),
            copy_sources_by_domain: BTreeMap::from([("terminal".to_string(), CopyFrom::State)]),
            copy_confidence: Some(0.5),
            loop_guard: Some(8),
            eval_rows_per_domain: 100,
            eval_batch: 16,
            eval_max_tokens: 700,
            checkpoint_every: 100,
            probe_every: 250,
            probe_rows_per_domain: 16,
            probe_generated_rows_per_domain: 8,
        }
    }
}

impl DemoRecipe {
    /// The copy prior `domain` is decoded with: its entry in [`Self::copy_bias_by_domain`],
    /// else [`Self::copy_bias`].
    pub fn copy_bias_for(&self, domain: &str) -> f32 {
        self.copy_bias_by_domain
            .get(domain)
            .copied()
            .unwrap_or(self.copy_bias)
    }
}

fn one() -> f64 {
    1.0
}
