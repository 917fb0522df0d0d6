//! The Qwen3.5-MoE text model (`Qwen3_5MoeForCausalLM`, transformers `modeling_qwen3_5_moe.py`;
//! qwen3_5_moe.md §4): token embedding, a stack of hybrid decoder layers (Gated DeltaNet and
//! gated full attention, each followed by a sparse MoE), a final `(1 + w)` RMSNorm and the
//! `lm_head` (untied in the released models; tied to `embed_tokens` when `tie_word_embeddings`).
//!
//! ```text
//! x = embed_tokens[ids]            (no scaling, no BOS)
//! x = layer_i(x)                   i = 0..num_hidden_layers
//! logits = lm_head(norm(x))        (no softcap)
//! ```

use burn::module::Module;
use burn::nn::{Embedding, Linear};
use burn::tensor::backend::Backend;
use burn::tensor::{Bool, Int, Tensor, TensorData};

use crate::cache::{DeltaNetState, KvCache, LayerCache, ModelCache};
use crate::error::{ModelError, Result};
use crate::kernels::{self, linear};
use crate::layers::decoder_layer::{DecoderLayer, LayerContext, Mixer};
use crate::layers::moe::Routing;
use crate::layers::rms_norm::RmsNorm1p;
use crate::layers::rope::PartialRope;

/// A batch of token ids, all rows the same length, with optional padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBatch {
    /// `[batch][seq]` token ids.
    pub ids: Vec<Vec<u32>>,
    /// `[batch][seq]`: `true` for real tokens, `false` for padding (usually left padding).
    /// `None` means no padding.
    pub valid: Option<Vec<Vec<bool>>>,
}

impl TokenBatch {
    /// One unpadded sequence.
    pub fn single(ids: Vec<u32>) -> Self {
        Self {
            ids: vec![ids],
            valid: None,
        }
    }

    /// Left-pads sequences of different lengths to a batch, with `pad_id` in the gaps.
    pub fn left_padded(seqs: &[Vec<u32>], pad_id: u32) -> Self {
        let len = seqs.iter().map(Vec::len).max().unwrap_or(0);
        let ids = seqs
            .iter()
            .map(|s| {
                std::iter::repeat_n(pad_id, len - s.len())
                    .chain(s.iter().copied())
                    .collect()
            })
            .collect();
        let valid = seqs
            .iter()
            .map(|s| {
                std::iter::repeat_n(false, len - s.len())
                    .chain(std::iter::repeat_n(true, s.len()))
                    .collect()
            })
            .collect();
        Self {
            ids,
            valid: Some(valid),
        }
    }

    fn dims(&self) -> (usize, usize) {
        (self.ids.len(), self.ids.first().map_or(0, Vec::len))
    }
}

/// Qwen3.5-MoE causal language model.
#[derive(Module, Debug)]
pub struct Qwen35Moe<B: Backend> {
    /// `[vocab, hidden]`.
    pub embed_tokens: Embedding<B>,
    /// Decoder layers, kinds from `layer_types`.
    pub layers: Vec<DecoderLayer<B>>,
    /// Final norm.
    pub norm: RmsNorm1p<B>,
    /// `[hidden, vocab]` (HF `lm_head.weight [vocab, hidden]`, transposed). `None`: tied, the
    /// logits are `hidden · embed_tokensᵀ` (`tie_word_embeddings`, as trained from scratch;
    /// the loader materialises a transposed copy instead, for the fast decode kernel).
    pub lm_head: Option<Linear<B>>,
    /// Rotated width per attention head.
    pub rotary_dim: usize,
    /// RoPE base.
    pub rope_theta: f64,
}

impl<B: Backend> Qwen35Moe<B> {
    /// Rows of the embedding (may exceed the tokenizer's ids).
    pub fn vocab_size(&self) -> usize {
        self.embed_tokens.weight.dims()[0]
    }

    /// Residual width.
    pub fn hidden_size(&self) -> usize {
        self.embed_tokens.weight.dims()[1]
    }

    /// An empty cache for `batch` sequences.
    pub fn new_cache(&self, batch: usize, device: &B::Device) -> ModelCache<B> {
        let layers = self
            .layers
            .iter()
            .map(|layer| match &layer.mixer {
                Mixer::FullAttention(_) => LayerCache::Attention(KvCache::default()),
                Mixer::LinearAttention(m) => LayerCache::DeltaNet(DeltaNetState {
                    conv: Tensor::zeros([batch, m.kernel_size() - 1, m.conv_dim()], device),
                    recurrent: Tensor::zeros(
                        [batch, m.num_v_heads, m.head_k_dim, m.head_v_dim],
                        device,
                    ),
                }),
            })
            .collect();
        ModelCache {
            layers,
            key_valid: vec![Vec::new(); batch],
            next_position: vec![0; batch],
        }
    }

    /// Runs the decoder and returns the final-normed hidden states. With a cache, continues the
    /// cached sequences and extends the cache; without one, starts from scratch and keeps nothing
    /// (training).
    ///
    /// # Shapes
    /// - output: `[batch, seq, hidden]`
    ///
    /// # Errors
    /// [`ModelError::Input`] for an empty or ragged batch, a token id outside the vocabulary, a
    /// padding mask of the wrong shape, or a cache made for another batch size.
    pub fn forward_hidden(
        &self,
        batch: &TokenBatch,
        cache: Option<&mut ModelCache<B>>,
    ) -> Result<Tensor<B, 3>> {
        self.forward_hidden_traced(batch, cache, None)
    }

    /// [`Self::forward_hidden`]; with `routing`, also records every layer's router choices
    /// (one [`Routing`] per layer, in layer order, each `[batch * seq, top_k]`, row-major over
    /// batch then position) — what the playground's MoE view draws.
    ///
    /// # Errors
    /// As [`Self::forward_hidden`].
    pub fn forward_hidden_traced(
        &self,
        batch: &TokenBatch,
        mut cache: Option<&mut ModelCache<B>>,
        mut routing: Option<&mut Vec<Routing<B>>>,
    ) -> Result<Tensor<B, 3>> {
        let (b, seq) = batch.dims();
        self.check_batch(batch, cache.as_deref())?;
        let device = self.embed_tokens.weight.device();

        let past_valid: Vec<Vec<bool>> = match &cache {
            Some(c) => c.key_valid.clone(),
            None => vec![Vec::new(); b],
        };
        let mut next_pos: Vec<i64> = match &cache {
            Some(c) => c.next_position.clone(),
            None => vec![0; b],
        };
        let valid = batch
            .valid
            .clone()
            .unwrap_or_else(|| vec![vec![true; seq]; b]);

        // Positions count real tokens only (HF generate: cumsum(mask) - 1; padding gets 1).
        let mut positions = Vec::with_capacity(b * seq);
        for (row, pos) in valid.iter().zip(next_pos.iter_mut()) {
            for &v in row {
                if v {
                    positions.push(*pos);
                    *pos += 1;
                } else {
                    positions.push(1);
                }
            }
        }
        let positions =
            Tensor::<B, 2, Int>::from_data(TensorData::new(positions, [b, seq]), &device);
        let rope = PartialRope::new(self.rotary_dim, self.rope_theta);
        let rope_tables = rope.tables(positions);

        let any_padding = valid.iter().chain(past_valid.iter()).flatten().any(|v| !v);
        let past = past_valid.first().map_or(0, Vec::len);
        let attention_mask = (seq > 1 || any_padding).then(|| {
            let total = past + seq;
            let mut hidden = Vec::with_capacity(b * seq * total);
            for r in 0..b {
                for t in 0..seq {
                    for j in 0..total {
                        let key_ok = if j < past {
                            past_valid[r][j]
                        } else {
                            valid[r][j - past]
                        };
                        hidden.push(!(key_ok && j <= past + t));
                    }
                }
            }
            Tensor::<B, 4, Bool>::from_data(TensorData::new(hidden, [b, 1, seq, total]), &device)
        });
        let padding = valid.iter().flatten().any(|v| !v).then(|| {
            let f: Vec<f32> = valid
                .iter()
                .flatten()
                .map(|&v| if v { 1.0 } else { 0.0 })
                .collect();
            Tensor::<B, 3>::from_data(TensorData::new(f, [b, seq, 1]), &device)
        });
        let ctx = LayerContext {
            rope: &rope,
            rope_tables: &rope_tables,
            attention_mask,
            padding,
        };

        let flat: Vec<i32> = batch.ids.iter().flatten().map(|&t| t as i32).collect();
        let ids = Tensor::<B, 2, Int>::from_data(TensorData::new(flat, [b, seq]), &device);
        // Rows of the embedding in its own dtype, widened into the f32 residual stream.
        let mut x = kernels::widen(self.embed_tokens.forward(ids));
        for (i, layer) in self.layers.iter().enumerate() {
            let layer_cache = cache.as_deref_mut().map(|c| &mut c.layers[i]);
            let (next, chosen) = layer.forward_routed(x, &ctx, layer_cache);
            x = next;
            if let Some(trace) = routing.as_deref_mut() {
                trace.push(chosen);
            }
        }
        if let Some(c) = cache {
            for (row, new) in c.key_valid.iter_mut().zip(valid) {
                row.extend(new);
            }
            c.next_position = next_pos;
        }
        Ok(self.norm.forward(x))
    }

    /// Logits for every position.
    ///
    /// # Shapes
    /// - hidden: `[batch, seq, hidden]`
    /// - output: `[batch, seq, vocab]`
    pub fn logits(&self, hidden: Tensor<B, 3>) -> Tensor<B, 3> {
        match &self.lm_head {
            Some(head) => linear(head, hidden),
            None => kernels::matmul(
                hidden,
                self.embed_tokens.weight.val().transpose().unsqueeze(),
            ),
        }
    }

    /// Logits for every position: [`Self::forward_hidden`] then [`Self::logits`].
    ///
    /// # Errors
    /// As [`Self::forward_hidden`].
    pub fn forward(
        &self,
        batch: &TokenBatch,
        cache: Option<&mut ModelCache<B>>,
    ) -> Result<Tensor<B, 3>> {
        Ok(self.logits(self.forward_hidden(batch, cache)?))
    }

    /// Logits of the last position of each row only (what generation needs).
    ///
    /// # Shapes
    /// - output: `[batch, vocab]`
    ///
    /// # Errors
    /// As [`Self::forward_hidden`].
    pub fn forward_last(
        &self,
        batch: &TokenBatch,
        cache: Option<&mut ModelCache<B>>,
    ) -> Result<Tensor<B, 2>> {
        self.forward_last_traced(batch, cache, None)
    }

    /// [`Self::forward_last`], recording the router's choices as
    /// [`Self::forward_hidden_traced`] does (for every position, not only the last).
    ///
    /// # Errors
    /// As [`Self::forward_hidden`].
    pub fn forward_last_traced(
        &self,
        batch: &TokenBatch,
        cache: Option<&mut ModelCache<B>>,
        routing: Option<&mut Vec<Routing<B>>>,
    ) -> Result<Tensor<B, 2>> {
        let hidden = self.forward_hidden_traced(batch, cache, routing)?;
        let [b, seq, h] = hidden.dims();
        let last = hidden.slice([0..b, seq - 1..seq, 0..h]);
        Ok(self.logits(last).reshape([b, self.vocab_size()]))
    }

    fn check_batch(&self, batch: &TokenBatch, cache: Option<&ModelCache<B>>) -> Result<()> {
        let (b, seq) = batch.dims();
        let err = |m: String| Err(ModelError::Input(m));
        if b == 0 || seq == 0 {
            return err(
                "empty batch: at least one sequence of at least one token is needed".into(),
            );
        }
        if let Some(r) = batch.ids.iter().position(|r| r.len() != seq) {
            return err(format!(
                "row {r} has {} tokens, row 0 has {seq}",
                batch.ids[r].len()
            ));
        }
        let vocab = self.vocab_size();
        for (r, row) in batch.ids.iter().enumerate() {
            if let Some(t) = row.iter().find(|&&t| t as usize >= vocab) {
                return err(format!(
                    "row {r}: token id {t} is outside the vocabulary ({vocab})"
                ));
            }
        }
        if let Some(valid) = &batch.valid
            && (valid.len() != b || valid.iter().any(|r| r.len() != seq))
        {
            return err(format!("padding mask must be [{b}][{seq}] like the ids"));
        }
        if let Some(c) = cache
            && c.batch_size() != b
        {
            return err(format!(
                "cache holds {} sequences, batch has {b}",
                c.batch_size()
            ));
        }
        Ok(())
    }
}
