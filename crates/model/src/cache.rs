//! Per-sequence caches, kept outside the modules (modules stay immutable).
//!
//! Full-attention layers keep keys and values; Gated DeltaNet layers keep the last `K - 1`
//! pre-convolution inputs and the recurrent state, in f32 when the model runs in f32
//! (qwen3_5_moe.md §4.4). A [`ModelCache`] also remembers which cached positions are padding
//! and how many real tokens each row has seen, which fixes the next positions.
//!
//! Continuous batching joins caches of different lengths with [`ModelCache::concat`]: the
//! shorter rows' keys and values are left-padded with zeros whose `key_valid` is `false`, so
//! attention masks them exactly like the left padding of a batched prefill. Gated DeltaNet
//! state has no time axis and is simply stacked. [`ModelCache::trim_padding`] drops the
//! leading positions that are padding in every row (after the longest row has left), so the
//! cached length stays the longest real sequence in the batch.

use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};

/// Keys and values of one full-attention layer, in preallocated buffers.
///
/// The buffers hold `capacity >= len` positions; a step writes its keys and values in place
/// after the cached ones (no copy of the cache per step, as long as the views [`Self::append`]
/// returned are dropped before the next step, which attention does). When a step would
/// overflow, the buffers grow to twice their size (amortised O(1) per token).
#[derive(Debug, Clone, Default)]
pub struct KvCache<B: Backend> {
    /// `(key, value)` buffers, each `[batch, kv_heads, capacity, head_dim]` (keys already
    /// rotated); `None` before the first step.
    buffers: Option<(Tensor<B, 4>, Tensor<B, 4>)>,
    /// Positions filled.
    len: usize,
}

/// Positions preallocated beyond a prefill, before the first growth.
pub const KV_HEADROOM: usize = 256;

impl<B: Backend> KvCache<B> {
    /// A cache holding exactly these keys and values (capacity = their length).
    ///
    /// # Shapes
    /// - key, value: `[batch, kv_heads, len, head_dim]`
    pub fn from_entries(key: Tensor<B, 4>, value: Tensor<B, 4>) -> Self {
        let len = key.dims()[2];
        Self {
            buffers: Some((key, value)),
            len,
        }
    }

    /// Views of the cached keys and values, `[batch, kv_heads, len, head_dim]` each.
    pub fn entries(&self) -> Option<(Tensor<B, 4>, Tensor<B, 4>)> {
        let (k, v) = self.buffers.as_ref()?;
        let [b, h, _, d] = k.dims();
        let len = self.len;
        Some((
            k.clone().slice([0..b, 0..h, 0..len, 0..d]),
            v.clone().slice([0..b, 0..h, 0..len, 0..d]),
        ))
    }

    /// Positions the buffers can hold before growing.
    pub fn capacity(&self) -> usize {
        self.buffers.as_ref().map_or(0, |(k, _)| k.dims()[2])
    }

    /// Appends this step's keys and values and returns views of everything cached so far.
    ///
    /// # Shapes
    /// - key, value: `[batch, kv_heads, seq, head_dim]`
    /// - output: `[batch, kv_heads, past + seq, head_dim]` each
    pub fn append(
        &mut self,
        key: Tensor<B, 4>,
        value: Tensor<B, 4>,
    ) -> (Tensor<B, 4>, Tensor<B, 4>) {
        let [b, h, seq, d] = key.dims();
        let (start, end) = (self.len, self.len + seq);
        let old_capacity = self.capacity();
        let buffers = match self.buffers.take() {
            Some((kb, vb)) if end <= kb.dims()[2] => (
                kb.slice_assign([0..b, 0..h, start..end, 0..d], key),
                vb.slice_assign([0..b, 0..h, start..end, 0..d], value),
            ),
            old => {
                let capacity = (2 * old_capacity).max(end + KV_HEADROOM);
                let device = key.device();
                let grow = |past: Option<Tensor<B, 4>>, new: Tensor<B, 4>| {
                    let mut parts = Vec::with_capacity(3);
                    if let Some(p) = past {
                        parts.push(p.slice([0..b, 0..h, 0..start, 0..d]));
                    }
                    parts.push(new);
                    parts.push(Tensor::zeros([b, h, capacity - end, d], &device));
                    Tensor::cat(parts, 2)
                };
                let (kb, vb) = match old {
                    Some((kb, vb)) => (Some(kb), Some(vb)),
                    None => (None, None),
                };
                (grow(kb, key), grow(vb, value))
            }
        };
        self.buffers = Some(buffers);
        self.len = end;
        self.entries().expect("just filled")
    }

    /// Cached positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is cached yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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
            Some(LayerCache::Attention(kv)) if !kv.is_empty() => {
                kv.entries().expect("non-empty").0.device()
            }
            _ => return self.retain_host(rows),
        };
        let idx: Vec<i32> = rows.iter().map(|&r| r as i32).collect();
        let idx = Tensor::<B, 1, Int>::from_data(TensorData::new(idx, [rows.len()]), &device);
        for layer in &mut self.layers {
            match layer {
                LayerCache::Attention(kv) => {
                    if let Some((k, v)) = kv.entries() {
                        *kv = KvCache::from_entries(
                            k.select(0, idx.clone()),
                            v.select(0, idx.clone()),
                        );
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

    /// Joins caches into one batch, rows in order (`parts[0]`'s rows first).
    ///
    /// Rows shorter than the longest are left-padded: zero keys and values, marked invalid in
    /// `key_valid`, so later steps never attend to them. Each row keeps its own
    /// `next_position`, so RoPE positions are unaffected by the padding.
    ///
    /// # Shapes
    /// - KV entries of part `i`: `[batch_i, kv_heads, past_i, head_dim]`
    /// - output KV entries: `[sum batch_i, kv_heads, max past_i, head_dim]`
    /// - DeltaNet conv `[sum batch_i, K - 1, conv_dim]`, recurrent `[sum batch_i, Hv, dk, dv]`
    ///
    /// # Panics
    /// If `parts` is empty or the parts come from different models (different layer kinds or
    /// widths): both are bugs of the caller, not bad input.
    pub fn concat(parts: Vec<ModelCache<B>>) -> ModelCache<B> {
        assert!(!parts.is_empty(), "concat needs at least one cache");
        if parts.len() == 1 {
            return parts.into_iter().next().expect("one part");
        }
        let total = parts.iter().map(ModelCache::seq_len).max().unwrap_or(0);
        let n_layers = parts[0].layers.len();
        assert!(
            parts.iter().all(|p| p.layers.len() == n_layers),
            "caches of different models"
        );
        let mut key_valid = Vec::new();
        let mut next_position = Vec::new();
        for part in &parts {
            let pad = total - part.seq_len();
            for row in &part.key_valid {
                let mut padded = vec![false; pad];
                padded.extend(row);
                key_valid.push(padded);
            }
            next_position.extend(&part.next_position);
        }
        let mut layers = Vec::with_capacity(n_layers);
        for l in 0..n_layers {
            let layer = match &parts[0].layers[l] {
                LayerCache::Attention(_) => LayerCache::Attention(concat_kv(&parts, l, total)),
                LayerCache::DeltaNet(_) => {
                    let (mut convs, mut recs) = (Vec::new(), Vec::new());
                    for part in &parts {
                        match &part.layers[l] {
                            LayerCache::DeltaNet(s) => {
                                convs.push(s.conv.clone());
                                recs.push(s.recurrent.clone());
                            }
                            LayerCache::Attention(_) => panic!("caches of different models"),
                        }
                    }
                    LayerCache::DeltaNet(DeltaNetState {
                        conv: Tensor::cat(convs, 0),
                        recurrent: Tensor::cat(recs, 0),
                    })
                }
            };
            layers.push(layer);
        }
        ModelCache {
            layers,
            key_valid,
            next_position,
        }
    }

    /// Drops the leading positions that are padding in every row; returns how many.
    ///
    /// Padding is only ever leading (left padding), so this keeps the cache as long as its
    /// longest row and no longer.
    pub fn trim_padding(&mut self) -> usize {
        let lead = self
            .key_valid
            .iter()
            .map(|row| row.iter().take_while(|v| !**v).count())
            .min()
            .unwrap_or(0);
        if lead == 0 {
            return 0;
        }
        for layer in &mut self.layers {
            if let LayerCache::Attention(kv) = layer
                && let Some((k, v)) = kv.entries()
            {
                let [b, h, len, d] = k.dims();
                *kv = KvCache::from_entries(
                    k.slice([0..b, 0..h, lead..len, 0..d]),
                    v.slice([0..b, 0..h, lead..len, 0..d]),
                );
            }
        }
        for row in &mut self.key_valid {
            row.drain(..lead);
        }
        lead
    }

    fn retain_host(&mut self, rows: &[usize]) {
        self.key_valid = rows.iter().map(|&r| self.key_valid[r].clone()).collect();
        self.next_position = rows.iter().map(|&r| self.next_position[r]).collect();
    }
}

/// Joins layer `l`'s keys and values of every part, left-padding each to `total` positions.
fn concat_kv<B: Backend>(parts: &[ModelCache<B>], l: usize, total: usize) -> KvCache<B> {
    let entries: Vec<Option<(Tensor<B, 4>, Tensor<B, 4>)>> = parts
        .iter()
        .map(|p| match &p.layers[l] {
            LayerCache::Attention(kv) => kv.entries(),
            LayerCache::DeltaNet(_) => panic!("caches of different models"),
        })
        .collect();
    let Some((k0, _)) = entries.iter().flatten().next() else {
        return KvCache::default();
    };
    let [_, heads, _, head_dim] = k0.dims();
    let device = k0.device();
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    for (part, entry) in parts.iter().zip(entries) {
        let rows = part.batch_size();
        let len = entry.as_ref().map_or(0, |(k, _)| k.dims()[2]);
        let pad = total - len;
        let mut k_parts = Vec::new();
        let mut v_parts = Vec::new();
        if pad > 0 {
            k_parts.push(Tensor::zeros([rows, heads, pad, head_dim], &device));
            v_parts.push(Tensor::zeros([rows, heads, pad, head_dim], &device));
        }
        if let Some((k, v)) = entry {
            k_parts.push(k);
            v_parts.push(v);
        }
        keys.push(Tensor::cat(k_parts, 2));
        values.push(Tensor::cat(v_parts, 2));
    }
    KvCache::from_entries(Tensor::cat(keys, 0), Tensor::cat(values, 0))
}

#[cfg(test)]
mod tests {
    use burn::tensor::Tolerance;

    use crate::model::{Qwen35Moe, TokenBatch};
    use crate::{Qwen35MoeConfig, TestBackend};

    type B = TestBackend;

    fn tiny() -> Qwen35Moe<B> {
        let json = serde_json::json!({
            "model_type": "qwen3_5_moe_text", "vocab_size": 64, "hidden_size": 32,
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 8, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
            "linear_key_head_dim": 8, "linear_value_head_dim": 8, "num_experts": 4,
            "num_experts_per_tok": 2, "moe_intermediate_size": 16,
            "shared_expert_intermediate_size": 16, "full_attention_interval": 2,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e4,
                                "partial_rotary_factor": 0.5}
        });
        let config = Qwen35MoeConfig::from_json_str(&json.to_string(), "tiny").unwrap();
        Qwen35Moe::init(&config, &Default::default())
    }

    /// Appending keeps every earlier position, fills the preallocated buffer in place and
    /// grows it when a step would overflow.
    #[test]
    fn kv_cache_appends_into_its_buffer_and_grows() {
        use super::{KV_HEADROOM, KvCache};
        use burn::tensor::{Distribution, Tensor};
        let dev = Default::default();
        let r = |s: usize| Tensor::<B, 4>::random([2, 1, s, 4], Distribution::Default, &dev);
        let mut kv = KvCache::<B>::default();
        let mut keys = Vec::new();
        let first = r(5);
        keys.push(first.clone());
        kv.append(first.clone(), first);
        assert_eq!((kv.len(), kv.capacity()), (5, 5 + KV_HEADROOM));
        for _ in 0..KV_HEADROOM + 3 {
            let step = r(1);
            keys.push(step.clone());
            let (k, _) = kv.append(step.clone(), step);
            assert_eq!(k.dims()[2], kv.len());
        }
        assert_eq!(kv.len(), 5 + KV_HEADROOM + 3);
        assert_eq!(kv.capacity(), 2 * (5 + KV_HEADROOM));
        let (k, v) = kv.entries().unwrap();
        let expected = Tensor::cat(keys, 2).into_data();
        k.into_data()
            .assert_approx_eq::<f32>(&expected, Tolerance::absolute(0.0));
        v.into_data()
            .assert_approx_eq::<f32>(&expected, Tolerance::absolute(0.0));
    }

    /// Prefills each prompt alone, joins the caches, decodes two steps as one batch and
    /// compares with decoding each sequence alone.
    #[test]
    fn concatenated_caches_decode_like_separate_ones() {
        let model = tiny();
        let dev = Default::default();
        let prompts = [vec![3u32, 9, 4, 1, 7, 2], vec![5, 8], vec![11, 12, 13, 14]];
        let steps = [[21u32, 22, 23], [31, 32, 33]];

        let mut alone = Vec::new();
        for (i, p) in prompts.iter().enumerate() {
            let mut cache = model.new_cache(1, &dev);
            model
                .forward_last(&TokenBatch::single(p.clone()), Some(&mut cache))
                .unwrap();
            let mut last = None;
            for s in &steps {
                let step = TokenBatch::single(vec![s[i]]);
                last = Some(model.forward_last(&step, Some(&mut cache)).unwrap());
            }
            alone.push(last.unwrap());
        }

        let mut parts = Vec::new();
        for p in &prompts {
            let mut cache = model.new_cache(1, &dev);
            model
                .forward_last(&TokenBatch::single(p.clone()), Some(&mut cache))
                .unwrap();
            parts.push(cache);
        }
        let mut cache = super::ModelCache::concat(parts);
        assert_eq!(cache.batch_size(), 3);
        assert_eq!(cache.seq_len(), 6);
        assert_eq!(cache.key_valid[1], [false, false, false, false, true, true]);
        let mut last = None;
        for s in &steps {
            let step = TokenBatch {
                ids: s.iter().map(|&t| vec![t]).collect(),
                valid: None,
            };
            last = Some(model.forward_last(&step, Some(&mut cache)).unwrap());
        }
        let batched = last.unwrap();
        for (i, a) in alone.into_iter().enumerate() {
            let [_, v] = batched.dims();
            batched
                .clone()
                .slice([i..i + 1, 0..v])
                .into_data()
                .assert_approx_eq::<f32>(&a.into_data(), Tolerance::absolute(1e-4));
        }

        // The longest row leaves: its positions go, the others are untouched.
        cache.retain(&[1, 2]);
        assert_eq!(cache.trim_padding(), 2);
        assert_eq!(cache.seq_len(), 6);
        assert_eq!(cache.key_valid[0], [false, false, true, true, true, true]);
        assert_eq!(cache.trim_padding(), 0);
    }
}
