//! Gated full attention of Qwen3.5-MoE (`Qwen3_5MoeAttention`, transformers
//! `modeling_qwen3_5_moe.py`; qwen3_5_moe.md §4.3).
//!
//! `q_proj` produces, per head, a query and an output gate side by side (`[query(hd) | gate(hd)]`).
//! Queries and keys go through a per-head [`RmsNorm1p`], then partial RoPE; keys and values are
//! shared by groups of query heads (GQA); scores are scaled by `head_dim^-0.5` with a causal
//! (and padding) mask; the softmax output is multiplied by `sigmoid(gate)` before `o_proj`.

use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::activation::{sigmoid, softmax};
use burn::tensor::backend::Backend;
use burn::tensor::{Bool, Tensor};

use super::rms_norm::RmsNorm1p;
use super::rope::{PartialRope, RopeTables};
use crate::cache::KvCache;
use crate::kernels::linear;

/// One gated full-attention mixer.
#[derive(Module, Debug)]
pub struct GatedAttention<B: Backend> {
    /// `[hidden, heads * head_dim * 2]`: per head, query then gate.
    pub q_proj: Linear<B>,
    /// `[hidden, kv_heads * head_dim]`.
    pub k_proj: Linear<B>,
    /// `[hidden, kv_heads * head_dim]`.
    pub v_proj: Linear<B>,
    /// `[heads * head_dim, hidden]`.
    pub o_proj: Linear<B>,
    /// Per-head query norm over `head_dim`.
    pub q_norm: RmsNorm1p<B>,
    /// Per-head key norm over `head_dim`.
    pub k_norm: RmsNorm1p<B>,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads.
    pub num_kv_heads: usize,
    /// Head width.
    pub head_dim: usize,
}

impl<B: Backend> GatedAttention<B> {
    /// Runs attention over `x`, appending this step's keys and values to `cache` if given.
    ///
    /// `mask` is `true` where a query may NOT look at a key; it already combines causality and
    /// padding. `None` means every query sees every key (a single decode step without padding).
    ///
    /// # Shapes
    /// - x: `[batch, seq, hidden]`
    /// - rope tables: `[batch, 1, seq, rot]`
    /// - mask: `[batch, 1, seq, past + seq]`
    /// - output: `[batch, seq, hidden]`
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        rope: &PartialRope,
        tables: &RopeTables<B>,
        mask: Option<Tensor<B, 4, Bool>>,
        cache: Option<&mut KvCache<B>>,
    ) -> Tensor<B, 3> {
        let [batch, seq, _] = x.dims();
        let (hq, hkv, hd) = (self.num_heads, self.num_kv_heads, self.head_dim);

        let qg = linear(&self.q_proj, x.clone()).reshape([batch, seq, hq, 2 * hd]);
        let query = qg.clone().slice([0..batch, 0..seq, 0..hq, 0..hd]);
        let gate = qg
            .slice([0..batch, 0..seq, 0..hq, hd..2 * hd])
            .reshape([batch, seq, hq * hd]);

        let query = self.q_norm.forward(query).swap_dims(1, 2); // [b, hq, s, hd]
        let key = linear(&self.k_proj, x.clone()).reshape([batch, seq, hkv, hd]);
        let key = self.k_norm.forward(key).swap_dims(1, 2); // [b, hkv, s, hd]
        let value = linear(&self.v_proj, x)
            .reshape([batch, seq, hkv, hd])
            .swap_dims(1, 2);

        let query = rope.apply(query, tables);
        let key = rope.apply(key, tables);
        let (key, value) = match cache {
            Some(cache) => cache.append(key, value),
            None => (key, value),
        };
        let total = key.dims()[2];

        // GQA: query head h reads kv head h / (hq / hkv). The `group` query heads of one kv
        // head are adjacent, so they are stacked along the query axis, [b, hkv, group * s, hd],
        // and multiplied with the kv head as it is: no copy of the cache per query head.
        let group = hq / hkv;
        let query = query.reshape([batch, hkv, group * seq, hd]);

        let scale = (hd as f64).powf(-0.5);
        // [b, hkv, group * s, total]
        let mut scores = query.matmul(key.swap_dims(2, 3)).mul_scalar(scale);
        if let Some(mask) = mask {
            // f32::MIN (not -inf) keeps fully masked rows (left padding) finite, as HF's eager
            // attention does with `finfo.min`.
            let mask = mask
                .unsqueeze_dim::<5>(2)
                .expand([batch, 1, group, seq, total])
                .reshape([batch, 1, group * seq, total])
                .expand([batch, hkv, group * seq, total]);
            scores = scores.mask_fill(mask, f32::MIN);
        }
        let probs = softmax(scores, 3);
        let out = probs
            .matmul(value) // [b, hkv, group * s, hd]
            .reshape([batch, hq, seq, hd])
            .swap_dims(1, 2)
            .reshape([batch, seq, hq * hd]);
        linear(&self.o_proj, out * sigmoid(gate))
    }
}
