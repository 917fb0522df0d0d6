//! SwiGLU feed-forward: the shared expert of every MoE block (`Qwen3_5MoeMLP`, transformers
//! `modeling_qwen3_5_moe.py`): `down_proj(silu(gate_proj(x)) * up_proj(x))`.

use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::Tensor;
use burn::tensor::activation::silu;
use burn::tensor::backend::Backend;

use crate::kernels::linear;

/// A SwiGLU MLP without biases.
#[derive(Module, Debug)]
pub struct SwiGluMlp<B: Backend> {
    /// `[hidden, intermediate]`.
    pub gate_proj: Linear<B>,
    /// `[hidden, intermediate]`.
    pub up_proj: Linear<B>,
    /// `[intermediate, hidden]`.
    pub down_proj: Linear<B>,
}

impl<B: Backend> SwiGluMlp<B> {
    /// # Shapes
    /// - x: `[..., hidden]`
    /// - output: `[..., hidden]`
    pub fn forward<const D: usize>(&self, x: Tensor<B, D>) -> Tensor<B, D> {
        let gate = silu(linear(&self.gate_proj, x.clone()));
        linear(&self.down_proj, gate * linear(&self.up_proj, x))
    }
}
