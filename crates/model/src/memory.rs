//! The memory plan: what a model needs resident before it is loaded, from `config.json` alone.
//!
//! Weights are counted tensor by tensor as [`crate::loader::load_model_with`] holds them: the
//! matrix-product weights (projections, routed and shared experts, router, embedding, LM head;
//! a tied head counts twice, since the loader materialises its transposed copy) at the
//! [`crate::WeightDtype`]'s bytes, or [`int8::BYTES_PER_WEIGHT`] where int8 applies (every projection
//! and expert whose output width is a multiple of 32, not the router or the embedding); norms,
//! conv1d, `A_log` and `dt_bias` in f32. The cache of one sequence at `N` tokens is what
//! [`crate::ModelCache`] holds, all in f32: K and V of each full-attention layer (`2 *
//! num_key_value_heads * head_dim * N`), and per DeltaNet layer the conv window (`(K - 1) *
//! conv_dim`) and the recurrent state (`Hv * dk * dv`), which do not grow with `N`.
//!
//! Activations are not counted (they depend on the chunk a prefill runs); serving keeps a
//! tenth of the device free for them ([`MemoryPlan::fits`]), as vLLM's default
//! `gpu_memory_utilization = 0.9` does.

use crate::config::{LayerType, Qwen35MoeConfig};
use crate::dtype::{LoadOptions, Quantize};
use crate::kernels::int8;

/// Bytes in a GiB.
pub const GIB: f64 = (1u64 << 30) as f64;

/// Fraction of the device memory the plan may fill (the rest is left for activations).
pub const UTILIZATION: f64 = 0.9;

/// The resident memory of one model, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryPlan {
    /// How the weights are held.
    pub options: LoadOptions,
    /// Weights, bytes.
    pub weights: f64,
    /// Cache of one sequence at `max_model_len` tokens, bytes.
    pub cache_per_seq: f64,
    /// Tokens the cache is sized for.
    pub max_model_len: usize,
    /// Sequences cached at once.
    pub max_batch: usize,
}

impl MemoryPlan {
    /// The plan for `config` with weights held as `options`, caching `max_batch` sequences
    /// of `max_model_len` tokens each.
    pub fn new(
        config: &Qwen35MoeConfig,
        options: LoadOptions,
        max_model_len: usize,
        max_batch: usize,
    ) -> Self {
        let c = config;
        let dtype = options.dtype.bytes() as f64;
        // A product weight [in, out]: int8 where it applies, else the dtype.
        let product = |d_in: usize, d_out: usize, quantizable: bool| -> f64 {
            let n = (d_in * d_out) as f64;
            if quantizable && options.quantize == Quantize::Int8 && int8::quantizable(d_out) {
                n * int8::BYTES_PER_WEIGHT
            } else {
                n * dtype
            }
        };
        let f32s = |n: usize| 4.0 * n as f64;
        let (h, v) = (c.hidden_size, c.vocab_size);
        let mut weights = (v * h) as f64 * dtype + product(h, v, true) + f32s(h);
        let (hq, hkv, hd) = (c.num_attention_heads, c.num_key_value_heads, c.head_dim);
        let (e, i, is) = (
            c.num_experts,
            c.moe_intermediate_size,
            c.shared_expert_intermediate_size,
        );
        let (hv, vd, conv) = (
            c.linear_num_value_heads,
            c.linear_value_dim(),
            c.linear_conv_dim(),
        );
        let mut cache = 0.0;
        for kind in c.layer_types() {
            weights += f32s(2 * h); // input / post-attention norms
            weights += match kind {
                LayerType::FullAttention => {
                    cache += f32s(2 * hkv * hd * max_model_len);
                    product(h, hq * hd * 2, true)
                        + 2.0 * product(h, hkv * hd, true)
                        + product(hq * hd, h, true)
                        + f32s(2 * hd)
                }
                LayerType::LinearAttention => {
                    cache += f32s((c.linear_conv_kernel_dim - 1) * conv)
                        + f32s(hv * c.linear_key_head_dim * c.linear_value_head_dim);
                    product(h, conv, true)
                        + product(h, vd, true)
                        + 2.0 * product(h, hv, true)
                        + product(vd, h, true)
                        + f32s(conv * c.linear_conv_kernel_dim + 2 * hv + c.linear_value_head_dim)
                }
            };
            weights += product(h, e, false) // router
                + e as f64 * (product(h, 2 * i, true) + product(i, h, true))
                + 2.0 * product(h, is, true)
                + product(is, h, true)
                + product(h, 1, true);
        }
        Self {
            options,
            weights,
            cache_per_seq: cache,
            max_model_len,
            max_batch,
        }
    }

    /// Weights plus `max_batch` caches, bytes.
    pub fn total(&self) -> f64 {
        self.weights + self.max_batch as f64 * self.cache_per_seq
    }

    /// Whether the plan fits `memory` bytes with a tenth left for activations
    /// ([`UTILIZATION`]).
    pub fn fits(&self, memory: f64) -> bool {
        self.total() <= UTILIZATION * memory
    }

    /// The machine-readable line:
    /// `memory dtype=D weights_gib=X cache_per_seq_gib=Y total_gib=Z` (GiB to 3 decimals; `D` is
    /// `int8` under int8, else the dtype).
    pub fn line(&self) -> String {
        let dtype = match self.options.quantize {
            Quantize::Int8 => "int8",
            Quantize::None => self.options.dtype.name(),
        };
        format!(
            "memory dtype={dtype} weights_gib={:.3} cache_per_seq_gib={:.3} total_gib={:.3}",
            self.weights / GIB,
            self.cache_per_seq / GIB,
            self.total() / GIB
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::WeightDtype;

    fn tiny() -> Qwen35MoeConfig {
        let j = serde_json::json!({
            "vocab_size": 32, "hidden_size": 16, "num_hidden_layers": 4, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "linear_num_key_heads": 1,
            "linear_num_value_heads": 2, "linear_key_head_dim": 4, "linear_value_head_dim": 4,
            "num_experts": 6, "num_experts_per_tok": 2, "moe_intermediate_size": 8,
            "shared_expert_intermediate_size": 8
        });
        Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap()
    }

    /// In f32 the weights are exactly what an initialised model holds (every parameter, 4
    /// bytes), plus the tied head's copy; bf16 halves the product weights only.
    #[test]
    fn f32_weights_equal_the_parameter_count() {
        let c = tiny();
        let plan = MemoryPlan::new(&c, LoadOptions::default(), 100, 1);
        let counts = c.param_counts();
        let head = if c.tie_word_embeddings {
            c.vocab_size * c.hidden_size
        } else {
            0
        };
        assert_eq!(plan.weights, 4.0 * (counts.total as f64 + head as f64));
        let bf16 = MemoryPlan::new(&c, LoadOptions::dtype(WeightDtype::Bf16), 100, 1);
        assert!(bf16.weights < 0.55 * plan.weights && bf16.weights > 0.5 * plan.weights);
    }

    /// The cache grows with tokens through the attention layers only.
    #[test]
    fn cache_counts_kv_per_token_and_fixed_deltanet_state() {
        let c = tiny();
        let a = MemoryPlan::new(&c, LoadOptions::default(), 100, 2);
        let b = MemoryPlan::new(&c, LoadOptions::default(), 200, 2);
        let attention_layers = c
            .layer_types()
            .iter()
            .filter(|t| **t == LayerType::FullAttention)
            .count();
        let per_token = 4.0 * (2 * c.num_key_value_heads * c.head_dim * attention_layers) as f64;
        assert_eq!(b.cache_per_seq - a.cache_per_seq, 100.0 * per_token);
        assert!(
            a.cache_per_seq > 100.0 * per_token,
            "DeltaNet state counted"
        );
        assert_eq!(a.total(), a.weights + 2.0 * a.cache_per_seq);
        assert!(a.line().starts_with("memory dtype=f32 weights_gib="));
    }
}
