//! One decoder layer of Qwen3.5-MoE (`Qwen3_5MoeDecoderLayer`, transformers
//! `modeling_qwen3_5_moe.py`): pre-norm residual blocks, a token mixer chosen by `layer_types`,
//! then the sparse MoE (every layer is MoE).
//!
//! ```text
//! h = x + mixer(RMSNorm1p(x; input_layernorm))
//! y = h + moe(RMSNorm1p(h; post_attention_layernorm))
//! ```

use burn::module::Module;
use burn::tensor::backend::Backend;
use burn::tensor::{Bool, Tensor};

use super::attention::GatedAttention;
use super::gated_delta_net::GatedDeltaNet;
use super::moe::{Routing, SparseMoe};
use super::rms_norm::RmsNorm1p;
use super::rope::{PartialRope, RopeTables};
use crate::cache::LayerCache;

/// The token mixer of a layer. The variants differ in size, but a model holds one per layer
/// (tens at most), so boxing would buy nothing.
#[derive(Module, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Mixer<B: Backend> {
    /// Gated DeltaNet (`layer_types[i] == "linear_attention"`; HF module `linear_attn`).
    LinearAttention(GatedDeltaNet<B>),
    /// Gated full attention (`"full_attention"`; HF module `self_attn`).
    FullAttention(GatedAttention<B>),
}

/// What a layer needs besides its input.
#[derive(Debug, Clone)]
pub struct LayerContext<'a, B: Backend> {
    /// Rotary frequencies.
    pub rope: &'a PartialRope,
    /// `cos`/`sin` for this step's positions, `[batch, 1, seq, rot]`.
    pub rope_tables: &'a RopeTables<B>,
    /// Attention mask (`true` = hidden), `[batch, 1, seq, past + seq]`.
    pub attention_mask: Option<Tensor<B, 4, Bool>>,
    /// 1.0 for real tokens, 0.0 for padding, `[batch, seq, 1]`.
    pub padding: Option<Tensor<B, 3>>,
}

/// One decoder layer.
#[derive(Module, Debug)]
pub struct DecoderLayer<B: Backend> {
    /// Norm before the mixer.
    pub input_layernorm: RmsNorm1p<B>,
    /// Token mixer.
    pub mixer: Mixer<B>,
    /// Norm before the MoE.
    pub post_attention_layernorm: RmsNorm1p<B>,
    /// Sparse MoE block (HF module `mlp`).
    pub mlp: SparseMoe<B>,
}

impl<B: Backend> DecoderLayer<B> {
    /// # Shapes
    /// - x: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]`
    ///
    /// # Panics
    /// If `cache` is of the other layer kind (an internal invariant: caches are built from the
    /// same config as the model).
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        ctx: &LayerContext<'_, B>,
        cache: Option<&mut LayerCache<B>>,
    ) -> Tensor<B, 3> {
        self.forward_routed(x, ctx, cache).0
    }

    /// [`Self::forward`], also returning the MoE router's choices, `[batch * seq, top_k]`.
    ///
    /// # Panics
    /// As [`Self::forward`].
    pub fn forward_routed(
        &self,
        x: Tensor<B, 3>,
        ctx: &LayerContext<'_, B>,
        cache: Option<&mut LayerCache<B>>,
    ) -> (Tensor<B, 3>, Routing<B>) {
        let normed = self.input_layernorm.forward(x.clone());
        let mixed = match (&self.mixer, cache) {
            (Mixer::LinearAttention(m), None) => m.forward(normed, ctx.padding.clone(), None),
            (Mixer::LinearAttention(m), Some(LayerCache::DeltaNet(s))) => {
                m.forward(normed, ctx.padding.clone(), Some(s))
            }
            (Mixer::FullAttention(m), None) => m.forward(
                normed,
                ctx.rope,
                ctx.rope_tables,
                ctx.attention_mask.clone(),
                None,
            ),
            (Mixer::FullAttention(m), Some(LayerCache::Attention(kv))) => m.forward(
                normed,
                ctx.rope,
                ctx.rope_tables,
                ctx.attention_mask.clone(),
                Some(kv),
            ),
            _ => panic!("layer cache kind does not match the layer kind"),
        };
        let h = x + mixed;
        let (moe, routing) = self
            .mlp
            .forward_routed(self.post_attention_layernorm.forward(h.clone()));
        (h + moe, routing)
    }
}
