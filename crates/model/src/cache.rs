//! Per-sequence caches, kept outside the modules (modules stay immutable).
//!
//! Full-attention layers keep keys and values; Gated DeltaNet layers keep the last `K - 1`
//! pre-convolution inputs and the recurrent state, in f32 when the model runs in f32
//! (qwen3_5_moe.md §4.4). A [`ModelCache`] also remembers which cached positions are padding
//! and how many real tokens each row has seen, which fixes the next positions.

use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};

/// Keys and values of one full-attention layer.
#[derive(Debug, Clone, Default)]
pub struct KvCache<B: Backend> {
    /// `(key, value)`, each `[batch, kv_heads, past, head_dim]` (keys already rotated); `None`
    /// before the first step.
    pub entries: Option<(Tensor<B, 4>, Tensor<B, 4>)>,
}

impl<B: Backend> KvCache<B> {
    /// Appends this step's keys and values and returns everything cached so far.
    ///
    /// # Shapes
    /// - key, value: `[batch, kv_heads, seq, head_dim]`
    /// - output: `[batch, kv_heads, past + seq, head_dim]` each
    pub fn append(
        &mut self,
        key: Tensor<B, 4>,
        value: Tensor<B, 4>,
    ) -> (Tensor<B, 4>, Tensor<B, 4>) {
        let (k, v) = match self.entries.take() {
            Some((k0, v0)) => (
                Tensor::cat(vec![k0, key], 2),
                Tensor::cat(vec![v0, value], 2),
            ),
            None => (key, value),
        };
        self.entries = Some((k.clone(), v.clone()));
        (k, v)
    }

    /// Cached positions.
    pub fn len(&self) -> usize {
        self.entries.as_ref().map_or(0, |(k, _)| k.dims()[2])
    }

    /// Whether nothing is cached yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Convolution window and recurrent state of one Gated DeltaNet layer.
#[derive(Debug, Clone)]
pub struct DeltaNetState<B: Backend> {
    /// The last `K - 1` inputs of the depthwise convolution, `[batch, K - 1, conv_dim]`.
    pub conv: Tensor<B, 3>,
    /// The delta-rule state `S`, `[batch, Hv, dk, dv]`.
    pub recurrent: Tensor<B, 4>,
}

/// The cache of one layer.
#[derive(Debug, Clone)]
pub enum LayerCache<B: Backend> {
    /// A full-attention layer.
    Attention(KvCache<B>),
    /// A Gated DeltaNet layer.
    DeltaNet(DeltaNetState<B>),
}

/// Everything a batch of sequences carries from one forward call to the next.
#[derive(Debug, Clone)]
pub struct ModelCache<B: Backend> {
    /// One entry per decoder layer.
    pub layers: Vec<LayerCache<B>>,
    /// `[batch][past]`: whether each cached position is a real token (false = padding).
    pub key_valid: Vec<Vec<bool>>,
    /// Real tokens seen per row: the position of that row's next token.
    pub next_position: Vec<i64>,
}

impl<B: Backend> ModelCache<B> {
    /// Batch size this cache was made for.
    pub fn batch_size(&self) -> usize {
        self.key_valid.len()
    }

    /// Positions cached so far (padding included).
    pub fn seq_len(&self) -> usize {
        self.key_valid.first().map_or(0, Vec::len)
    }

    /// Keeps only the given rows (in that order), dropping finished sequences from a batch.
    ///
    /// # Panics
    /// If a row index is out of range (an internal invariant of the caller's bookkeeping).
    pub fn retain(&mut self, rows: &[usize]) {
        let batch = self.batch_size();
        assert!(rows.iter().all(|&r| r < batch), "row out of range");
        if rows.len() == batch && rows.iter().enumerate().all(|(i, &r)| i == r) {
            return;
        }
        let device = match self.layers.first() {
            Some(LayerCache::DeltaNet(s)) => s.conv.device(),
            Some(LayerCache::Attention(KvCache {
                entries: Some((k, _)),
            })) => k.device(),
            _ => return self.retain_host(rows),
        };
        let idx: Vec<i32> = rows.iter().map(|&r| r as i32).collect();
        let idx = Tensor::<B, 1, Int>::from_data(TensorData::new(idx, [rows.len()]), &device);
        for layer in &mut self.layers {
            match layer {
                LayerCache::Attention(kv) => {
                    if let Some((k, v)) = kv.entries.take() {
                        kv.entries = Some((k.select(0, idx.clone()), v.select(0, idx.clone())));
                    }
                }
                LayerCache::DeltaNet(s) => {
                    s.conv = s.conv.clone().select(0, idx.clone());
                    s.recurrent = s.recurrent.clone().select(0, idx.clone());
                }
            }
        }
        self.retain_host(rows);
    }

    fn retain_host(&mut self, rows: &[usize]) {
        self.key_valid = rows.iter().map(|&r| self.key_valid[r].clone()).collect();
        self.next_position = rows.iter().map(|&r| self.next_position[r]).collect();
    }
}
