//! The gated delta rule, in its chunked (prefill) and recurrent (decode) forms.
//!
//! Follows `torch_chunk_gated_delta_rule` and `torch_recurrent_gated_delta_rule` in transformers
//! (`modeling_qwen3_5_moe.py`, the PyTorch fallback of the `fla` kernels; qwen3_5_moe.md §4.4) and
//! Yang et al., "Gated Delta Networks" (arXiv:2412.06464). Per value head, with state
//! `S [dk, dv]`:
//!
//! ```text
//! S_t = exp(g_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T,     o_t = S_t^T q_t
//! ```
//!
//! Queries and keys are l2-normalised here (`use_qk_l2norm_in_kernel=True`) and queries scaled
//! by `dk^-0.5`. Everything runs in the backend float type, which must be f32 for parity (the
//! reference keeps this kernel in f32 even for bf16 models).

use burn::tensor::Tensor;
use burn::tensor::backend::Backend;

/// Chunk length of the chunked form (64, as in the reference).
pub const CHUNK_SIZE: usize = 64;

/// `x * rsqrt(sum(x^2, -1) + 1e-6)` over the last axis.
pub fn l2norm<B: Backend, const D: usize>(x: Tensor<B, D>) -> Tensor<B, D> {
    let sum = x.clone().powi_scalar(2).sum_dim(D - 1);
    x * sum.add_scalar(1e-6).sqrt().recip()
}

/// Inputs of the delta rule for one layer, heads already expanded to the value heads.
#[derive(Debug, Clone)]
pub struct DeltaRuleInput<B: Backend> {
    /// Queries `[batch, heads, seq, dk]`, not yet normalised.
    pub query: Tensor<B, 4>,
    /// Keys `[batch, heads, seq, dk]`, not yet normalised.
    pub key: Tensor<B, 4>,
    /// Values `[batch, heads, seq, dv]`.
    pub value: Tensor<B, 4>,
    /// Log decay `g <= 0`, `[batch, heads, seq]`.
    pub g: Tensor<B, 3>,
    /// Write strength `beta in (0, 1)`, `[batch, heads, seq]`.
    pub beta: Tensor<B, 3>,
}

impl<B: Backend> DeltaRuleInput<B> {
    /// L2-normalised query (also scaled by `dk^-0.5`) and key, as HF's
    /// `torch_recurrent_gated_delta_rule` / `torch_chunk_gated_delta_rule` with
    /// `use_qk_l2norm_in_kernel=True`.
    fn normalised(self) -> Self {
        let dk = self.query.dims()[3];
        Self {
            query: l2norm(self.query).mul_scalar((dk as f64).powf(-0.5)),
            key: l2norm(self.key),
            ..self
        }
    }
}

/// Recurrent form: one step per token. Used for decode.
///
/// # Shapes
/// - state (in and out): `[batch, heads, dk, dv]`
/// - output: `[batch, heads, seq, dv]`
pub fn recurrent<B: Backend>(
    input: DeltaRuleInput<B>,
    state: Tensor<B, 4>,
) -> (Tensor<B, 4>, Tensor<B, 4>) {
    let DeltaRuleInput {
        query,
        key,
        value,
        g,
        beta,
    } = input.normalised();
    let [b, h, seq, dk] = key.dims();
    let dv = value.dims()[3];
    let mut state = state;
    let mut outputs = Vec::with_capacity(seq);
    for t in 0..seq {
        // With one token (decode) the inputs are used whole, without a slice.
        let step = |x: &Tensor<B, 4>, d: usize| {
            if seq == 1 {
                x.clone()
            } else {
                x.clone().slice([0..b, 0..h, t..t + 1, 0..d])
            }
        };
        let step3 = |x: &Tensor<B, 3>| {
            if seq == 1 {
                x.clone()
            } else {
                x.clone().slice([0..b, 0..h, t..t + 1])
            }
        };
        let q_t = step(&query, dk); // [b, h, 1, dk]
        let k_t = step(&key, dk);
        let v_t = step(&value, dv); // [b, h, 1, dv]
        let g_t = step3(&g).exp().unsqueeze_dim::<4>(3); // [b, h, 1, 1]
        let beta_t = step3(&beta).unsqueeze_dim::<4>(3);
        state = state * g_t;
        let kv_mem = k_t.clone().matmul(state.clone()); // [b, h, 1, dv] = S^T k
        let delta = (v_t - kv_mem) * beta_t;
        state = state + k_t.swap_dims(2, 3).matmul(delta); // k ⊗ delta
        outputs.push(q_t.matmul(state.clone())); // [b, h, 1, dv] = S^T q
    }
    (Tensor::cat(outputs, 2), state)
}

/// Chunked form (chunks of [`CHUNK_SIZE`]): within a chunk the delta rule is solved as a
/// unit-triangular system, across chunks the state is carried. Used for prefill.
///
/// # Shapes
/// - state (in and out): `[batch, heads, dk, dv]`
/// - output: `[batch, heads, seq, dv]`
pub fn chunked<B: Backend>(
    input: DeltaRuleInput<B>,
    state: Tensor<B, 4>,
) -> (Tensor<B, 4>, Tensor<B, 4>) {
    let DeltaRuleInput {
        query,
        key,
        value,
        g,
        beta,
    } = input.normalised();
    let [b, h, seq, dk] = key.dims();
    let dv = value.dims()[3];
    let c = CHUNK_SIZE;
    let pad = (c - seq % c) % c;
    let total = seq + pad;
    let n = total / c;
    let device = key.device();

    // Right-pad with zeros: g = 0 and beta = 0 there, so padding neither decays nor writes.
    let pad4 = |t: Tensor<B, 4>, d: usize| {
        if pad == 0 {
            t
        } else {
            Tensor::cat(vec![t, Tensor::zeros([b, h, pad, d], &device)], 2)
        }
    };
    let pad3 = |t: Tensor<B, 3>| {
        if pad == 0 {
            t
        } else {
            Tensor::cat(vec![t, Tensor::zeros([b, h, pad], &device)], 2)
        }
    };
    let query = pad4(query, dk).reshape([b, h, n, c, dk]);
    let key = pad4(key, dk).reshape([b, h, n, c, dk]);
    let value = pad4(value, dv).reshape([b, h, n, c, dv]);
    let beta = pad3(beta).reshape([b, h, n, c, 1]);
    let g = pad3(g).reshape([b, h, n, c]).cumsum(3); // G: cumulative log decay in each chunk

    let k_beta = key.clone() * beta.clone();
    let v_beta = value * beta;
    // decay[i, j] = exp(G_i - G_j) for i >= j, else 0.
    let g_col = g.clone().unsqueeze_dim::<5>(4); // [b,h,n,c,1]
    let g_row = g.clone().unsqueeze_dim::<5>(3); // [b,h,n,1,c]
    let decay = (g_col - g_row).tril(0).exp().tril(0);

    // T = (I + L)^-1 with L = strictly_lower((k_beta K^T) ⊙ decay). The reference solves it by
    // forward substitution, one row at a time (c - 1 dependent steps). L is nilpotent (L^c = 0),
    // so with N = -L the same inverse is the finite product
    //   (I - N)^-1 = (I + N)(I + N^2)(I + N^4) ... (I + N^(c/2)),
    // log2(c) squarings and products of whole [c, c] blocks, with no per-row loop.
    let neg_l = (k_beta.clone().matmul(key.clone().swap_dims(3, 4)) * decay.clone())
        .tril(-1)
        .neg();
    let eye = Tensor::<B, 2>::eye(c, &device).reshape([1, 1, 1, c, c]);
    let mut attn = neg_l.clone() + eye;
    let mut power = neg_l;
    let mut reach = 2;
    while reach < c {
        power = power.clone().matmul(power);
        attn = attn.clone() + attn.matmul(power.clone());
        reach *= 2;
    }
    let u = attn.clone().matmul(v_beta); // [b,h,n,c,dv]
    let w = attn.matmul(k_beta * g.clone().exp().unsqueeze_dim::<5>(4)); // [b,h,n,c,dk]

    let mut state = state;
    let mut outputs = Vec::with_capacity(n);
    for i in 0..n {
        let chunk = |t: Tensor<B, 5>, d: usize| {
            t.slice([0..b, 0..h, i..i + 1, 0..c, 0..d])
                .reshape([b, h, c, d])
        };
        let (q_i, k_i) = (chunk(query.clone(), dk), chunk(key.clone(), dk));
        let (u_i, w_i) = (chunk(u.clone(), dv), chunk(w.clone(), dk));
        let decay_i = chunk(decay.clone(), c);
        let g_i = g
            .clone()
            .slice([0..b, 0..h, i..i + 1, 0..c])
            .reshape([b, h, c, 1]);
        let g_last = g_i.clone().slice([0..b, 0..h, c - 1..c, 0..1]); // [b,h,1,1]

        let a_qk = (q_i.clone().matmul(k_i.clone().swap_dims(2, 3)) * decay_i).tril(0);
        let v_new = u_i - w_i.matmul(state.clone());
        let inter = (q_i * g_i.clone().exp()).matmul(state.clone());
        outputs.push(inter + a_qk.matmul(v_new.clone()));
        let k_decayed = k_i * (g_last.clone() - g_i).exp(); // [b,h,c,dk]
        state = state * g_last.exp() + k_decayed.swap_dims(2, 3).matmul(v_new);
    }
    let out = Tensor::cat(outputs, 2).slice([0..b, 0..h, 0..seq, 0..dv]);
    (out, state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestBackend;
    use burn::tensor::{Distribution, Tolerance};

    fn random_input(b: usize, h: usize, s: usize, d: usize) -> DeltaRuleInput<TestBackend> {
        let dev = Default::default();
        let r = |shape: [usize; 4]| Tensor::random(shape, Distribution::Normal(0.0, 1.0), &dev);
        let g = Tensor::<TestBackend, 3>::random([b, h, s], Distribution::Uniform(-1.0, 0.0), &dev);
        let beta =
            Tensor::<TestBackend, 3>::random([b, h, s], Distribution::Uniform(0.0, 1.0), &dev);
        DeltaRuleInput {
            query: r([b, h, s, d]),
            key: r([b, h, s, d]),
            value: r([b, h, s, d]),
            g,
            beta,
        }
    }

    /// The chunked form spans several chunks and a ragged tail; it must equal the token-by-token
    /// recurrence, outputs and final state alike.
    #[test]
    fn chunked_equals_recurrent_across_chunks() {
        let input = random_input(2, 3, 150, 8);
        let s0 = Tensor::<TestBackend, 4>::random(
            [2, 3, 8, 8],
            Distribution::Normal(0.0, 0.5),
            &Default::default(),
        );
        let (o_rec, s_rec) = recurrent(input.clone(), s0.clone());
        let (o_chk, s_chk) = chunked(input, s0);
        o_chk
            .into_data()
            .assert_approx_eq(&o_rec.into_data(), Tolerance::<f32>::absolute(1e-4));
        s_chk
            .into_data()
            .assert_approx_eq(&s_rec.into_data(), Tolerance::<f32>::absolute(1e-4));
    }

    /// With beta = 1, g = 0 and one orthonormal key, the state stores v exactly and a query equal
    /// to the key reads it back (scaled by dk^-0.5).
    #[test]
    fn delta_rule_writes_and_reads_a_value() {
        let dev = Default::default();
        let k = Tensor::<TestBackend, 4>::from_floats([[[[1.0, 0.0]]]], &dev);
        let v = Tensor::<TestBackend, 4>::from_floats([[[[3.0, -2.0]]]], &dev);
        let input = DeltaRuleInput {
            query: k.clone(),
            key: k,
            value: v,
            g: Tensor::zeros([1, 1, 1], &dev),
            beta: Tensor::ones([1, 1, 1], &dev),
        };
        let (o, _) = recurrent(input, Tensor::zeros([1, 1, 2, 2], &dev));
        let s = 0.5f32.sqrt() * (1.0 / (1.0f32 + 1e-6).sqrt());
        o.into_data().assert_approx_eq(
            &burn::tensor::TensorData::from([[[[3.0 * s, -2.0 * s]]]]),
            Tolerance::<f32>::absolute(1e-5),
        );
    }
}
