//! Gated DeltaNet linear attention of Qwen3.5-MoE (`Qwen3_5MoeGatedDeltaNet`, transformers
//! `modeling_qwen3_5_moe.py`; qwen3_5_moe.md §4.4; Yang et al., arXiv:2412.06464).
//!
//! ```text
//! qkv  = silu(causal_depthwise_conv1d(in_proj_qkv(x)))      kernel K, no bias
//! q,k,v = split(qkv, [Hk*dk, Hk*dk, Hv*dv]);  q,k repeated to Hv heads (v head h reads k head h/(Hv/Hk))
//! beta = sigmoid(in_proj_b(x));   g = -exp(A_log) * softplus(in_proj_a(x) + dt_bias)
//! o    = gated_delta_rule(q, k, v, g, beta)                  chunked for prefill, recurrent for decode
//! out  = out_proj(RMSNormGated(o, z = in_proj_z(x)))
//! ```

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::Tensor;
use burn::tensor::activation::{sigmoid, silu};
use burn::tensor::backend::Backend;

use super::delta_rule::{self, DeltaRuleInput};
use super::rms_norm::RmsNormGated;
use crate::cache::DeltaNetState;
use crate::kernels::linear;

/// One Gated DeltaNet mixer.
#[derive(Module, Debug)]
pub struct GatedDeltaNet<B: Backend> {
    /// `[hidden, 2*Hk*dk + Hv*dv]`: rows of q, then k, then v (head-major, not interleaved).
    pub in_proj_qkv: Linear<B>,
    /// `[hidden, Hv*dv]`: the output gate `z`.
    pub in_proj_z: Linear<B>,
    /// `[hidden, Hv]`: pre-sigmoid write strength.
    pub in_proj_b: Linear<B>,
    /// `[hidden, Hv]`: pre-softplus decay input.
    pub in_proj_a: Linear<B>,
    /// Depthwise causal convolution weights `[conv_dim, K]` (HF `conv1d.weight [conv_dim, 1, K]`).
    pub conv1d: Param<Tensor<B, 2>>,
    /// Decay bias `[Hv]`.
    pub dt_bias: Param<Tensor<B, 1>>,
    /// Log of the decay rate `A`, `[Hv]` (HF key `A_log`).
    pub a_log: Param<Tensor<B, 1>>,
    /// Gated output norm over `dv`, shared by all heads.
    pub norm: RmsNormGated<B>,
    /// `[Hv*dv, hidden]`.
    pub out_proj: Linear<B>,
    /// Query/key heads `Hk`.
    pub num_k_heads: usize,
    /// Value heads `Hv`.
    pub num_v_heads: usize,
    /// Key head width `dk`.
    pub head_k_dim: usize,
    /// Value head width `dv`.
    pub head_v_dim: usize,
}

/// Numerically stable `softplus(x) = log(1 + exp(x))` (PyTorch returns `x` past 20; this agrees
/// to f32 precision everywhere).
fn softplus<B: Backend, const D: usize>(x: Tensor<B, D>) -> Tensor<B, D> {
    x.clone().clamp_min(0.0) + x.abs().neg().exp().log1p()
}

impl<B: Backend> GatedDeltaNet<B> {
    /// Convolution width `K`.
    pub fn kernel_size(&self) -> usize {
        self.conv1d.dims()[1]
    }

    /// Channels of the convolution, `2*Hk*dk + Hv*dv`.
    pub fn conv_dim(&self) -> usize {
        self.conv1d.dims()[0]
    }

    /// Runs the mixer. `state`, when given, is read (conv window, recurrent state) and updated.
    /// Without a state the sequence starts from zeros and nothing is kept (training).
    ///
    /// `padding`, when given, is 1.0 for real tokens and 0.0 for padding; padded inputs are
    /// zeroed, which leaves the recurrent state untouched at those steps.
    ///
    /// # Shapes
    /// - x: `[batch, seq, hidden]`
    /// - padding: `[batch, seq, 1]`
    /// - output: `[batch, seq, hidden]`
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        padding: Option<Tensor<B, 3>>,
        state: Option<&mut DeltaNetState<B>>,
    ) -> Tensor<B, 3> {
        let x = match padding {
            Some(p) => x * p,
            None => x,
        };
        let [batch, seq, _] = x.dims();
        let (hk, hv, dk, dv) = (
            self.num_k_heads,
            self.num_v_heads,
            self.head_k_dim,
            self.head_v_dim,
        );
        let (kd, vd) = (hk * dk, hv * dv);
        let device = x.device();

        let mixed = linear(&self.in_proj_qkv, x.clone()); // [b, s, conv_dim]
        let z = linear(&self.in_proj_z, x.clone()).reshape([batch, seq, hv, dv]);
        let beta = sigmoid(linear(&self.in_proj_b, x.clone())); // [b, s, hv]
        let a = linear(&self.in_proj_a, x);
        let dt_bias = self.dt_bias.val().reshape([1, 1, hv]);
        let decay_rate = self.a_log.val().exp().reshape([1, 1, hv]);
        let g = softplus(a + dt_bias).mul(decay_rate).neg(); // [b, s, hv]

        let k = self.kernel_size();
        let conv_dim = self.conv_dim();
        let window = match &state {
            Some(s) => s.conv.clone(),
            None => Tensor::zeros([batch, k - 1, conv_dim], &device),
        };
        let padded = Tensor::cat(vec![window, mixed], 1); // [b, k-1+s, conv_dim]
        let qkv = silu(self.depthwise_conv(padded.clone(), seq));

        let q = qkv
            .clone()
            .slice([0..batch, 0..seq, 0..kd])
            .reshape([batch, seq, hk, dk]);
        let kk = qkv
            .clone()
            .slice([0..batch, 0..seq, kd..2 * kd])
            .reshape([batch, seq, hk, dk]);
        let v = qkv
            .slice([0..batch, 0..seq, 2 * kd..2 * kd + vd])
            .reshape([batch, seq, hv, dv]);
        let repeat = |t: Tensor<B, 4>| {
            let r = hv / hk;
            if r == 1 {
                t
            } else {
                t.unsqueeze_dim::<5>(3)
                    .expand([batch, seq, hk, r, dk])
                    .reshape([batch, seq, hv, dk])
            }
        };
        // [b, s, h, ..] -> [b, h, s, ..]. For one token this is a reshape: burn 0.21's wgpu
        // backend mis-handles some ops on the strided view swap_dims would make (wrong results
        // for batch > 1 in decode), and a reshape of a contiguous tensor is free anyway.
        let heads_first = |t: Tensor<B, 4>| {
            let [b, s, h, d] = t.dims();
            if s == 1 {
                t.reshape([b, h, 1, d])
            } else {
                t.swap_dims(1, 2)
            }
        };
        let heads_first3 = |t: Tensor<B, 3>| {
            let [b, s, h] = t.dims();
            if s == 1 {
                t.reshape([b, h, 1])
            } else {
                t.swap_dims(1, 2)
            }
        };
        let input = DeltaRuleInput {
            query: heads_first(repeat(q)),
            key: heads_first(repeat(kk)),
            value: heads_first(v),
            g: heads_first3(g),
            beta: heads_first3(beta),
        };
        let s0 = match &state {
            Some(s) => s.recurrent.clone(),
            None => Tensor::zeros([batch, hv, dk, dv], &device),
        };
        let (o, s1) = if seq == 1 {
            delta_rule::recurrent(input, s0)
        } else {
            delta_rule::chunked(input, s0)
        };
        if let Some(state) = state {
            let len = padded.dims()[1];
            state.conv = padded.slice([0..batch, len - (k - 1)..len, 0..conv_dim]);
            state.recurrent = s1;
        }
        let o = if seq == 1 {
            o.reshape([batch, 1, hv, dv])
        } else {
            o.swap_dims(1, 2)
        };
        let o = self.norm.forward(o, z); // [b, s, hv, dv]
        linear(&self.out_proj, o.reshape([batch, seq, vd]))
    }

    /// Valid depthwise convolution over time of an input already left-padded by `K - 1` steps.
    ///
    /// # Shapes
    /// - padded: `[batch, K - 1 + seq, conv_dim]`
    /// - output: `[batch, seq, conv_dim]`
    fn depthwise_conv(&self, padded: Tensor<B, 3>, seq: usize) -> Tensor<B, 3> {
        let [batch, _, channels] = padded.dims();
        let k = self.kernel_size();
        let weight = self.conv1d.val(); // [c, k]
        let mut out: Option<Tensor<B, 3>> = None;
        for j in 0..k {
            let tap = weight
                .clone()
                .slice([0..channels, j..j + 1])
                .reshape([1, 1, channels]);
            let term = padded.clone().slice([0..batch, j..j + seq, 0..channels]) * tap;
            out = Some(match out {
                Some(acc) => acc + term,
                None => term,
            });
        }
        out.expect("kernel size is positive")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestBackend;
    use burn::tensor::TensorData;

    #[test]
    fn softplus_is_stable_and_exact() {
        let dev = Default::default();
        let x = Tensor::<TestBackend, 1>::from_floats([-30.0, -1.0, 0.0, 2.0, 100.0], &dev);
        let expected: Vec<f32> = [-30.0f32, -1.0, 0.0, 2.0, 100.0]
            .iter()
            .map(|&v| if v > 20.0 { v } else { v.exp().ln_1p() })
            .collect();
        softplus(x).into_data().assert_approx_eq(
            &TensorData::from(expected.as_slice()),
            burn::tensor::Tolerance::<f32>::absolute(1e-6),
        );
    }
}
