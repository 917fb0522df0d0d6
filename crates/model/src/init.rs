//! Building a model from a config with fresh weights (training from scratch, tests).
//!
//! With `tie_word_embeddings` there is no separate `lm_head`: the embedding is trained as both.
//! Initialisation follows transformers' `Qwen3_5MoePreTrainedModel._init_weights`: linear,
//! convolution, expert and embedding weights `N(0, initializer_range)`, `(1 + w)` norms at zero,
//! gated norms at one, `dt_bias` at one, `A_log = log(U(0.01, 16))`. The convolution matters:
//! PyTorch's default (kaiming-uniform, bound 0.5 for kernel 4) instead of `N(0, 0.02)` kept a
//! small model from ever learning to copy from its context in our tests.

use burn::module::Param;
use burn::nn::{Embedding, Linear};
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};

use crate::config::{LayerType, Qwen35MoeConfig};
use crate::layers::attention::GatedAttention;
use crate::layers::decoder_layer::{DecoderLayer, Mixer};
use crate::layers::gated_delta_net::GatedDeltaNet;
use crate::layers::mlp::SwiGluMlp;
use crate::layers::moe::{Experts, SparseMoe};
use crate::layers::rms_norm::{RmsNorm1p, RmsNormGated};
use crate::model::Qwen35Moe;

/// Standard deviation of fresh linear weights (`initializer_range` in HF configs).
pub const INITIALIZER_RANGE: f64 = 0.02;

fn normal<B: Backend, const D: usize>(shape: [usize; D], device: &B::Device) -> Tensor<B, D> {
    Tensor::random(shape, Distribution::Normal(0.0, INITIALIZER_RANGE), device)
}

/// A bias-free linear layer `[d_in, d_out]` with `N(0, 0.02)` weights.
pub fn linear<B: Backend>(d_in: usize, d_out: usize, device: &B::Device) -> Linear<B> {
    Linear {
        weight: Param::from_tensor(normal([d_in, d_out], device)),
        bias: None,
    }
}

/// Choices of a from-scratch initialisation beyond transformers' `_init_weights`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InitOptions {
    /// Initial scale `1 + w` of every attention layer's `q_norm` and `k_norm` (transformers:
    /// 1). With QK-norm the largest attention logit is `sqrt(head_dim) * q_scale * k_scale`:
    /// 5.7 for a head of 32 at scale 1, too flat to pick one position out of a thousand
    /// (`e^5.7` against `1000 * e^0`), so a small model cannot copy from a long context until
    /// the norm weights have grown.
    pub qk_norm_scale: f64,
}

impl Default for InitOptions {
    fn default() -> Self {
        Self { qk_norm_scale: 1.0 }
    }
}

impl<B: Backend> Qwen35Moe<B> {
    /// A model with fresh weights for `config`.
    ///
    /// # Panics
    /// Never for a config that passed [`Qwen35MoeConfig::validate`].
    pub fn init(config: &Qwen35MoeConfig, device: &B::Device) -> Self {
        Self::init_with(config, device, InitOptions::default())
    }

    /// [`Self::init`] with [`InitOptions`].
    ///
    /// # Panics
    /// As [`Self::init`].
    pub fn init_with(config: &Qwen35MoeConfig, device: &B::Device, options: InitOptions) -> Self {
        let h = config.hidden_size;
        let eps = config.rms_norm_eps;
        let layers = config
            .layer_types()
            .into_iter()
            .map(|kind| DecoderLayer {
                input_layernorm: RmsNorm1p::init(h, eps, device),
                mixer: match kind {
                    LayerType::LinearAttention => {
                        Mixer::LinearAttention(init_deltanet(config, device))
                    }
                    LayerType::FullAttention => {
                        Mixer::FullAttention(init_attention(config, device, options))
                    }
                },
                post_attention_layernorm: RmsNorm1p::init(h, eps, device),
                mlp: init_moe(config, device),
            })
            .collect();
        Self {
            embed_tokens: Embedding {
                weight: Param::from_tensor(normal([config.vocab_size, h], device)),
            },
            layers,
            norm: RmsNorm1p::init(h, eps, device),
            lm_head: (!config.tie_word_embeddings).then(|| linear(h, config.vocab_size, device)),
            rotary_dim: config.rotary_dim(),
            rope_theta: config.rope_parameters.rope_theta,
        }
    }
}

fn init_attention<B: Backend>(
    c: &Qwen35MoeConfig,
    device: &B::Device,
    options: InitOptions,
) -> GatedAttention<B> {
    let qk_norm = || {
        RmsNorm1p::new(
            Tensor::full([c.head_dim], options.qk_norm_scale - 1.0, device),
            c.rms_norm_eps,
        )
    };
    let (h, hq, hkv, hd) = (
        c.hidden_size,
        c.num_attention_heads,
        c.num_key_value_heads,
        c.head_dim,
    );
    GatedAttention {
        q_proj: linear(h, hq * hd * 2, device),
        k_proj: linear(h, hkv * hd, device),
        v_proj: linear(h, hkv * hd, device),
        o_proj: linear(hq * hd, h, device),
        q_norm: qk_norm(),
        k_norm: qk_norm(),
        num_heads: hq,
        num_kv_heads: hkv,
        head_dim: hd,
    }
}

fn init_deltanet<B: Backend>(c: &Qwen35MoeConfig, device: &B::Device) -> GatedDeltaNet<B> {
    let h = c.hidden_size;
    let (hv, vd, k) = (
        c.linear_num_value_heads,
        c.linear_value_dim(),
        c.linear_conv_kernel_dim,
    );
    let a = Tensor::<B, 1>::random([hv], Distribution::Uniform(0.01, 16.0), device).log();
    GatedDeltaNet {
        in_proj_qkv: linear(h, c.linear_conv_dim(), device),
        in_proj_z: linear(h, vd, device),
        in_proj_b: linear(h, hv, device),
        in_proj_a: linear(h, hv, device),
        conv1d: Param::from_tensor(normal([c.linear_conv_dim(), k], device)),
        dt_bias: Param::from_tensor(Tensor::ones([hv], device)),
        a_log: Param::from_tensor(a),
        norm: RmsNormGated::init(c.linear_value_head_dim, c.rms_norm_eps, device),
        out_proj: linear(vd, h, device),
        num_k_heads: c.linear_num_key_heads,
        num_v_heads: hv,
        head_k_dim: c.linear_key_head_dim,
        head_v_dim: c.linear_value_head_dim,
    }
}

fn init_moe<B: Backend>(c: &Qwen35MoeConfig, device: &B::Device) -> SparseMoe<B> {
    let (h, e, i, is) = (
        c.hidden_size,
        c.num_experts,
        c.moe_intermediate_size,
        c.shared_expert_intermediate_size,
    );
    SparseMoe {
        gate: linear(h, e, device),
        experts: Experts {
            gate_up_proj: Param::from_tensor(normal([e, h, 2 * i], device)),
            down_proj: Param::from_tensor(normal([e, i, h], device)),
        },
        shared_expert: SwiGluMlp {
            gate_proj: linear(h, is, device),
            up_proj: linear(h, is, device),
            down_proj: linear(is, h, device),
        },
        shared_expert_gate: linear(h, 1, device),
        top_k: c.num_experts_per_tok,
    }
}
