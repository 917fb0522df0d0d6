//! Model configuration: the Hugging Face `config.json` of Qwen3.5-MoE, read field for field.
//!
//! Follows `Qwen3_5MoeTextConfig` / `Qwen3_5MoeConfig` in transformers
//! (`models/qwen3_5_moe/configuration_qwen3_5_moe.py`). Two layouts are accepted:
//! - composite (`model_type: "qwen3_5_moe"`, the text model under `text_config`), which is what
//!   Qwen3.5 and Qwen-AgentWorld checkpoints ship;
//! - text-only (`model_type: "qwen3_5_moe_text"`), what `Qwen3_5MoeForCausalLM.save_pretrained`
//!   writes.
//!
//! Unknown fields are ignored. Fields that fix tensor shapes are required; the rest take the
//! transformers defaults.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ModelError, Result};

/// The kind of token mixer in one decoder layer (`layer_types` in `config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LayerType {
    /// Gated DeltaNet linear attention (`"linear_attention"`).
    #[serde(rename = "linear_attention")]
    LinearAttention,
    /// Gated full softmax attention (`"full_attention"`).
    #[serde(rename = "full_attention")]
    FullAttention,
}

/// RoPE parameters (`rope_parameters` in `config.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RopeParameters {
    /// Only `"default"` is supported.
    #[serde(default = "default_rope_type")]
    pub rope_type: String,
    /// Base of the inverse frequencies (1e7 in the released checkpoints).
    #[serde(default = "default_rope_theta")]
    pub rope_theta: f64,
    /// Share of `head_dim` that is rotated (0.25).
    #[serde(default = "default_partial_rotary_factor")]
    pub partial_rotary_factor: f64,
    /// M-RoPE sections (temporal, height, width). Text positions use one value for all three,
    /// so the sections do not change the result for text; kept for round-tripping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mrope_section: Option<Vec<usize>>,
    /// Whether the M-RoPE sections are interleaved; kept for round-tripping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mrope_interleaved: Option<bool>,
}

fn default_rope_type() -> String {
    "default".into()
}
fn default_rope_theta() -> f64 {
    10_000.0
}
fn default_partial_rotary_factor() -> f64 {
    0.25
}

impl Default for RopeParameters {
    fn default() -> Self {
        Self {
            rope_type: default_rope_type(),
            rope_theta: default_rope_theta(),
            partial_rotary_factor: default_partial_rotary_factor(),
            mrope_section: None,
            mrope_interleaved: None,
        }
    }
}

/// The text model's configuration, with the exact field names of HF `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qwen35MoeConfig {
    /// Embedding rows (248320 in the released models; the tokenizer has fewer ids).
    pub vocab_size: usize,
    /// Residual stream width `hidden`.
    pub hidden_size: usize,
    /// Decoder layers.
    pub num_hidden_layers: usize,
    /// Query heads of the full-attention layers.
    pub num_attention_heads: usize,
    /// Key/value heads of the full-attention layers (GQA).
    pub num_key_value_heads: usize,
    /// Head width of the full-attention layers.
    pub head_dim: usize,
    /// DeltaNet query/key heads `Hk`.
    pub linear_num_key_heads: usize,
    /// DeltaNet value heads `Hv` (a multiple of `Hk`).
    pub linear_num_value_heads: usize,
    /// DeltaNet key head width `dk`.
    pub linear_key_head_dim: usize,
    /// DeltaNet value head width `dv`.
    pub linear_value_head_dim: usize,
    /// Depthwise causal convolution width of the DeltaNet layers.
    #[serde(default = "default_conv_kernel")]
    pub linear_conv_kernel_dim: usize,
    /// Routed experts per MoE block.
    pub num_experts: usize,
    /// Experts chosen per token (top-k).
    pub num_experts_per_tok: usize,
    /// Intermediate width of each routed expert.
    pub moe_intermediate_size: usize,
    /// Intermediate width of the shared expert.
    pub shared_expert_intermediate_size: usize,
    /// RMSNorm epsilon.
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    /// Activation of the experts; only `"silu"` is supported.
    #[serde(default = "default_act")]
    pub hidden_act: String,
    /// Whether q/k/v/o projections have a bias; only `false` is supported.
    #[serde(default)]
    pub attention_bias: bool,
    /// Whether `lm_head` reuses `embed_tokens` (false in the released models).
    #[serde(default)]
    pub tie_word_embeddings: bool,
    /// Longest sequence the model was trained for.
    #[serde(default = "default_max_pos")]
    pub max_position_embeddings: usize,
    /// Mixer kind per layer. When absent, every `full_attention_interval`-th layer is full
    /// attention (`(i + 1) % interval == 0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_types: Option<Vec<LayerType>>,
    /// See `layer_types`.
    #[serde(default = "default_interval")]
    pub full_attention_interval: usize,
    /// RoPE parameters.
    #[serde(default)]
    pub rope_parameters: RopeParameters,
    /// Whether full attention gates its output with `sigmoid(gate)`; only `true` is supported.
    #[serde(default = "default_true")]
    pub attn_output_gate: bool,
    /// End-of-sequence id(s) from the config, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eos_token_id: Option<Value>,
    /// Beginning-of-sequence id, if any (never prepended by the tokenizer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bos_token_id: Option<Value>,
}

fn default_conv_kernel() -> usize {
    4
}
fn default_eps() -> f64 {
    1e-6
}
fn default_act() -> String {
    "silu".into()
}
fn default_max_pos() -> usize {
    32_768
}
fn default_interval() -> usize {
    4
}
fn default_true() -> bool {
    true
}

/// Parameter counts derived from a config, without allocating any weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamCounts {
    /// Every parameter of the text model (embeddings, layers, final norm, `lm_head`).
    pub total: u64,
    /// Parameters touched per token: everything but the routed experts, plus top-k of them.
    pub active: u64,
    /// Parameters of the routed experts alone.
    pub routed_experts: u64,
}

impl Qwen35MoeConfig {
    /// Parses `config.json` text in either layout.
    ///
    /// `file` only names the source in error messages.
    ///
    /// # Errors
    /// [`ModelError::Config`] when the JSON is malformed, a required field is missing, or a
    /// value is unsupported (naming the field).
    pub fn from_json_str(text: &str, file: &str) -> Result<Self> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| ModelError::config(file, format!("invalid JSON: {e}")))?;
        let model_type = root.get("model_type").and_then(Value::as_str).unwrap_or("");
        let text_value = match root.get("text_config") {
            Some(tc) if tc.is_object() => tc.clone(),
            Some(_) => return Err(ModelError::config(file, "`text_config` is not an object")),
            None if model_type == "qwen3_5_moe" => {
                return Err(ModelError::config(
                    file,
                    "model_type is `qwen3_5_moe` but `text_config` is missing",
                ));
            }
            None => root.clone(),
        };
        let inner_type = text_value
            .get("model_type")
            .and_then(Value::as_str)
            .unwrap_or("");
        let known = ["qwen3_5_moe", "qwen3_5_moe_text", ""];
        if !known.contains(&model_type) || !known.contains(&inner_type) {
            let found = if inner_type.is_empty() {
                model_type
            } else {
                inner_type
            };
            return Err(ModelError::config(
                file,
                format!(
                    "model_type `{found}` is not supported; expected `qwen3_5_moe` (with \
                     text_config) or `qwen3_5_moe_text`"
                ),
            ));
        }
        let mut cfg: Self = serde_json::from_value(text_value)
            .map_err(|e| ModelError::config(file, format!("{e}")))?;
        if cfg.eos_token_id.is_none() {
            cfg.eos_token_id = root.get("eos_token_id").cloned();
        }
        cfg.validate(file)?;
        Ok(cfg)
    }

    /// Checks the values the implementation depends on.
    ///
    /// # Errors
    /// [`ModelError::Config`] naming the offending field.
    pub fn validate(&self, file: &str) -> Result<()> {
        let err = |m: String| Err(ModelError::config(file, m));
        let positive = [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("head_dim", self.head_dim),
            ("linear_num_key_heads", self.linear_num_key_heads),
            ("linear_num_value_heads", self.linear_num_value_heads),
            ("linear_key_head_dim", self.linear_key_head_dim),
            ("linear_value_head_dim", self.linear_value_head_dim),
            ("linear_conv_kernel_dim", self.linear_conv_kernel_dim),
            ("num_experts", self.num_experts),
            ("num_experts_per_tok", self.num_experts_per_tok),
            ("moe_intermediate_size", self.moe_intermediate_size),
            ("full_attention_interval", self.full_attention_interval),
        ];
        for (name, v) in positive {
            if v == 0 {
                return err(format!("`{name}` must be positive"));
            }
        }
        if !self
            .num_attention_heads
            .is_multiple_of(self.num_key_value_heads)
        {
            return err(format!(
                "`num_attention_heads` ({}) must be a multiple of `num_key_value_heads` ({})",
                self.num_attention_heads, self.num_key_value_heads
            ));
        }
        if !self
            .linear_num_value_heads
            .is_multiple_of(self.linear_num_key_heads)
        {
            return err(format!(
                "`linear_num_value_heads` ({}) must be a multiple of `linear_num_key_heads` ({})",
                self.linear_num_value_heads, self.linear_num_key_heads
            ));
        }
        if self.num_experts_per_tok > self.num_experts {
            return err(format!(
                "`num_experts_per_tok` ({}) exceeds `num_experts` ({})",
                self.num_experts_per_tok, self.num_experts
            ));
        }
        if self.hidden_act != "silu" {
            return err(format!(
                "`hidden_act` `{}` is not supported (only silu)",
                self.hidden_act
            ));
        }
        if self.attention_bias {
            return err("`attention_bias: true` is not supported by Qwen3.5-MoE".into());
        }
        if !self.attn_output_gate {
            return err("`attn_output_gate: false` is not supported by Qwen3.5-MoE".into());
        }
        if self.rope_parameters.rope_type != "default" {
            return err(format!(
                "`rope_parameters.rope_type` `{}` is not supported (only default)",
                self.rope_parameters.rope_type
            ));
        }
        let rot = self.rotary_dim();
        if rot == 0 || !rot.is_multiple_of(2) || rot > self.head_dim {
            return err(format!(
                "`partial_rotary_factor` {} gives a rotary width of {rot} for head_dim {}; it \
                 must be even and positive",
                self.rope_parameters.partial_rotary_factor, self.head_dim
            ));
        }
        if let Some(types) = &self.layer_types
            && types.len() != self.num_hidden_layers
        {
            return err(format!(
                "`layer_types` has {} entries but `num_hidden_layers` is {}",
                types.len(),
                self.num_hidden_layers
            ));
        }
        Ok(())
    }

    /// The mixer kind of every layer, from `layer_types` or `full_attention_interval`.
    pub fn layer_types(&self) -> Vec<LayerType> {
        match &self.layer_types {
            Some(t) => t.clone(),
            None => (0..self.num_hidden_layers)
                .map(|i| {
                    if (i + 1) % self.full_attention_interval == 0 {
                        LayerType::FullAttention
                    } else {
                        LayerType::LinearAttention
                    }
                })
                .collect(),
        }
    }

    /// Rotated width per head: `int(head_dim * partial_rotary_factor)`.
    pub fn rotary_dim(&self) -> usize {
        (self.head_dim as f64 * self.rope_parameters.partial_rotary_factor) as usize
    }

    /// DeltaNet key projection width `Kd = Hk * dk`.
    pub fn linear_key_dim(&self) -> usize {
        self.linear_num_key_heads * self.linear_key_head_dim
    }

    /// DeltaNet value projection width `Vd = Hv * dv`.
    pub fn linear_value_dim(&self) -> usize {
        self.linear_num_value_heads * self.linear_value_head_dim
    }

    /// Channels of the DeltaNet convolution: `2 * Kd + Vd`.
    pub fn linear_conv_dim(&self) -> usize {
        2 * self.linear_key_dim() + self.linear_value_dim()
    }

    /// End-of-sequence ids listed in the config (`eos_token_id`, int or list).
    pub fn eos_token_ids(&self) -> Vec<u32> {
        match &self.eos_token_id {
            Some(Value::Number(n)) => n.as_u64().map(|v| vec![v as u32]).unwrap_or_default(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_u64().map(|v| v as u32))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Serialises as a text-only `config.json` (`model_type: qwen3_5_moe_text`), loadable by
    /// transformers' `Qwen3_5MoeForCausalLM`.
    pub fn to_hf_json(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("config serialises");
        let obj = v.as_object_mut().expect("object");
        obj.insert("model_type".into(), "qwen3_5_moe_text".into());
        obj.insert(
            "architectures".into(),
            serde_json::json!(["Qwen3_5MoeForCausalLM"]),
        );
        obj.insert(
            "layer_types".into(),
            serde_json::to_value(self.layer_types()).expect("ok"),
        );
        v
    }

    /// Parameter counts implied by the shapes in `qwen3_5_moe.md` §3, without allocating.
    pub fn param_counts(&self) -> ParamCounts {
        let h = self.hidden_size as u64;
        let v = self.vocab_size as u64;
        let e = self.num_experts as u64;
        let k = self.num_experts_per_tok as u64;
        let i = self.moe_intermediate_size as u64;
        let is = self.shared_expert_intermediate_size as u64;
        let (hq, hkv, hd) = (
            self.num_attention_heads as u64,
            self.num_key_value_heads as u64,
            self.head_dim as u64,
        );
        let (kd, vd, hv) = (
            self.linear_key_dim() as u64,
            self.linear_value_dim() as u64,
            self.linear_num_value_heads as u64,
        );
        let conv = (2 * kd + vd) * self.linear_conv_kernel_dim as u64;
        let dv = self.linear_value_head_dim as u64;
        let deltanet = (2 * kd + vd) * h + vd * h + 2 * hv * h + conv + 2 * hv + dv + h * vd;
        let attention = hq * hd * 2 * h + 2 * hkv * hd * h + h * hq * hd + 2 * hd;
        let expert = 3 * h * i;
        let shared = 3 * h * is + h;
        let router = e * h;
        let norms = 2 * h;
        let mut total = v * h + h + if self.tie_word_embeddings { 0 } else { v * h };
        let mut routed = 0;
        for t in self.layer_types() {
            total += norms + router + shared + e * expert;
            total += match t {
                LayerType::LinearAttention => deltanet,
                LayerType::FullAttention => attention,
            };
            routed += e * expert;
        }
        let layers = self.num_hidden_layers as u64;
        ParamCounts {
            total,
            active: total - routed + layers * k * expert,
            routed_experts: routed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_json() -> serde_json::Value {
        serde_json::json!({
            "model_type": "qwen3_5_moe_text", "vocab_size": 512, "hidden_size": 64,
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 32, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
            "linear_key_head_dim": 16, "linear_value_head_dim": 16, "num_experts": 8,
            "num_experts_per_tok": 2, "moe_intermediate_size": 32,
            "shared_expert_intermediate_size": 48, "some_future_field": [1, 2, 3],
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e7,
                                "partial_rotary_factor": 0.25}
        })
    }

    #[test]
    fn text_only_config_parses_and_ignores_unknown_fields() {
        let cfg = Qwen35MoeConfig::from_json_str(&tiny_json().to_string(), "config.json").unwrap();
        assert_eq!(cfg.rotary_dim(), 8);
        assert_eq!(cfg.linear_conv_dim(), 2 * 32 + 64);
        assert_eq!(
            cfg.layer_types(),
            vec![
                LayerType::LinearAttention,
                LayerType::LinearAttention,
                LayerType::LinearAttention,
                LayerType::FullAttention
            ]
        );
    }

    #[test]
    fn composite_config_reads_text_config_and_top_level_eos() {
        let composite = serde_json::json!({
            "model_type": "qwen3_5_moe", "eos_token_id": 248046,
            "architectures": ["Qwen3_5MoeForConditionalGeneration"],
            "text_config": tiny_json(), "vision_config": {"depth": 27}
        });
        let cfg = Qwen35MoeConfig::from_json_str(&composite.to_string(), "c.json").unwrap();
        assert_eq!(cfg.hidden_size, 64);
        assert_eq!(cfg.eos_token_ids(), vec![248046]);
    }

    #[test]
    fn missing_required_field_names_it() {
        let mut j = tiny_json();
        j.as_object_mut().unwrap().remove("num_experts");
        let err = Qwen35MoeConfig::from_json_str(&j.to_string(), "cfg/config.json").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("cfg/config.json") && msg.contains("num_experts"),
            "{msg}"
        );
    }

    #[test]
    fn unsupported_values_are_errors() {
        let mut j = tiny_json();
        j["hidden_act"] = "gelu".into();
        let msg = Qwen35MoeConfig::from_json_str(&j.to_string(), "x")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("hidden_act"), "{msg}");
        let mut j = tiny_json();
        j["model_type"] = "llama".into();
        let msg = Qwen35MoeConfig::from_json_str(&j.to_string(), "x")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("llama"), "{msg}");
        let mut j = tiny_json();
        j["layer_types"] = serde_json::json!(["full_attention"]);
        let msg = Qwen35MoeConfig::from_json_str(&j.to_string(), "x")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("layer_types"), "{msg}");
    }

    /// The real 35B-A3B shape (qwen3_5_moe.md §2): about 35B total, about 3B active.
    #[test]
    fn real_35b_a3b_parameter_counts() {
        let cfg = real_config(2048, 40, 16, 32, 256, 8, 512, 512);
        let c = cfg.param_counts();
        let (total, active) = (c.total as f64 / 1e9, c.active as f64 / 1e9);
        assert!((34.0..36.0).contains(&total), "total {total}B");
        assert!((3.0..3.8).contains(&active), "active {active}B");
    }

    /// The 397B-A17B shape: about 397B total, about 17B active.
    #[test]
    fn real_397b_a17b_parameter_counts() {
        let mut cfg = real_config(4096, 60, 32, 64, 512, 10, 1024, 1024);
        cfg.linear_num_key_heads = 16;
        let c = cfg.param_counts();
        let (total, active) = (c.total as f64 / 1e9, c.active as f64 / 1e9);
        assert!((390.0..402.0).contains(&total), "total {total}B");
        assert!((16.0..18.5).contains(&active), "active {active}B");
    }

    #[allow(clippy::too_many_arguments)]
    fn real_config(
        hidden: usize,
        layers: usize,
        heads: usize,
        v_heads: usize,
        experts: usize,
        top_k: usize,
        inter: usize,
        shared: usize,
    ) -> Qwen35MoeConfig {
        let j = serde_json::json!({
            "model_type": "qwen3_5_moe", "text_config": {
                "vocab_size": 248320, "hidden_size": hidden, "num_hidden_layers": layers,
                "num_attention_heads": heads, "num_key_value_heads": 2, "head_dim": 256,
                "linear_num_key_heads": 16, "linear_num_value_heads": v_heads,
                "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                "num_experts": experts, "num_experts_per_tok": top_k,
                "moe_intermediate_size": inter, "shared_expert_intermediate_size": shared,
                "max_position_embeddings": 262144,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1e7,
                    "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10],
                    "mrope_interleaved": true}
            }
        });
        Qwen35MoeConfig::from_json_str(&j.to_string(), "real").unwrap()
    }
}
