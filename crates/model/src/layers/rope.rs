//! Partial rotary position embedding (RoPE) of the full-attention layers.
//!
//! Follows `Qwen3_5MoeTextRotaryEmbedding` and `apply_rotary_pos_emb` in transformers
//! (`modeling_qwen3_5_moe.py`). Only the first `rot = head_dim * partial_rotary_factor` dims of
//! each head rotate, NeoX style (`rotate_half(x) = cat(-x[rot/2:], x[:rot/2])`), with
//! `inv_freq[j] = theta^(-2j/rot)`. The model's interleaved M-RoPE picks frequency slots from the
//! temporal, height and width position rows; text positions are equal in all three rows, so for
//! text this is exactly plain partial RoPE, which is what is implemented.

use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor};

/// Precomputed inverse frequencies of a partial RoPE.
#[derive(Debug, Clone)]
pub struct PartialRope {
    /// `theta^(-2j/rot)` for `j in 0..rot/2`.
    inv_freq: Vec<f32>,
    /// Rotated width `rot`.
    pub rotary_dim: usize,
}

/// `cos` and `sin` tables for a batch of positions.
///
/// Both have shape `[batch, 1, seq, rot]` so they broadcast over heads.
#[derive(Debug, Clone)]
pub struct RopeTables<B: Backend> {
    /// `cos(pos * inv_freq)`, duplicated over the two halves.
    pub cos: Tensor<B, 4>,
    /// `sin(pos * inv_freq)`, duplicated over the two halves.
    pub sin: Tensor<B, 4>,
}

impl PartialRope {
    /// Builds the frequencies for a rotated width `rotary_dim` (even) and base `theta`.
    pub fn new(rotary_dim: usize, theta: f64) -> Self {
        let half = rotary_dim / 2;
        // transformers: 1 / theta ** (arange(0, rot, 2, int64).float() / rot), in f32.
        let inv_freq = (0..half)
            .map(|j| {
                let exponent = (2 * j) as f32 / rotary_dim as f32;
                1.0 / (theta as f32).powf(exponent)
            })
            .collect();
        Self {
            inv_freq,
            rotary_dim,
        }
    }

    /// `cos`/`sin` tables for integer positions.
    ///
    /// # Shapes
    /// - positions: `[batch, seq]`
    /// - output tables: `[batch, 1, seq, rot]`
    pub fn tables<B: Backend>(&self, positions: Tensor<B, 2, Int>) -> RopeTables<B> {
        let device = positions.device();
        let [batch, seq] = positions.dims();
        let half = self.inv_freq.len();
        let inv =
            Tensor::<B, 1>::from_floats(self.inv_freq.as_slice(), &device).reshape([1, 1, half]);
        let freqs = positions.float().reshape([batch, seq, 1]) * inv; // [b, s, half]
        let emb = Tensor::cat(vec![freqs.clone(), freqs], 2).reshape([batch, 1, seq, 2 * half]);
        RopeTables {
            cos: emb.clone().cos(),
            sin: emb.sin(),
        }
    }

    /// Rotates the first `rot` dims of every head; the rest pass through.
    ///
    /// # Shapes
    /// - x: `[batch, heads, seq, head_dim]`
    /// - tables: `[batch, 1, seq, rot]`
    /// - output: `[batch, heads, seq, head_dim]`
    pub fn apply<B: Backend>(&self, x: Tensor<B, 4>, tables: &RopeTables<B>) -> Tensor<B, 4> {
        let [b, h, s, d] = x.dims();
        let rot = self.rotary_dim;
        let half = rot / 2;
        let x_rot = x.clone().slice([0..b, 0..h, 0..s, 0..rot]);
        let x1 = x_rot.clone().slice([0..b, 0..h, 0..s, 0..half]);
        let x2 = x_rot.clone().slice([0..b, 0..h, 0..s, half..rot]);
        let rotated = Tensor::cat(vec![x2.neg(), x1], 3);
        let out = x_rot * tables.cos.clone() + rotated * tables.sin.clone();
        if rot == d {
            out
        } else {
            Tensor::cat(vec![out, x.slice([0..b, 0..h, 0..s, rot..d])], 3)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestBackend;
    use burn::tensor::{TensorData, Tolerance};

    #[test]
    fn rotates_only_the_first_rot_dims() {
        let dev = Default::default();
        let rope = PartialRope::new(4, 10_000.0);
        let pos = Tensor::<TestBackend, 2, Int>::from_ints([[0, 1]], &dev);
        let tables = rope.tables(pos);
        let x = Tensor::<TestBackend, 4>::from_floats(
            [[[
                [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            ]]],
            &dev,
        );
        let y = rope.apply(x, &tables);
        // Position 0 is the identity; position 1 rotates pair (x0, x2) by 1 rad and (x1, x3)
        // by 10000^(-1/2) = 0.01 rad; dims 4 and 5 pass through.
        let (c1, s1) = (1f32.cos(), 1f32.sin());
        let (c2, s2) = (0.01f32.cos(), 0.01f32.sin());
        let expected = TensorData::from([[[
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            [
                1.0 * c1 - 3.0 * s1,
                2.0 * c2 - 4.0 * s2,
                3.0 * c1 + 1.0 * s1,
                4.0 * c2 + 2.0 * s2,
                5.0,
                6.0,
            ],
        ]]]);
        y.into_data()
            .assert_approx_eq(&expected, Tolerance::<f32>::absolute(1e-5));
    }
}
