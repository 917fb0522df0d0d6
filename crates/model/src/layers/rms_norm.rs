//! RMSNorm in the two forms Qwen3.5-MoE uses.
//!
//! - [`RmsNorm1p`]: `Qwen3_5MoeRMSNorm` (transformers `modeling_qwen3_5_moe.py`), used for the
//!   layer norms, the final norm and the q/k norms. The weight is stored as an offset from one:
//!   `y = x * rsqrt(mean(x^2) + eps) * (1 + w)`.
//! - [`RmsNormGated`]: `Qwen3_5MoeRMSNormGated`, the Gated DeltaNet output norm. Plain weight,
//!   normalise first, gate second: `y = w * (x * rsqrt(mean(x^2) + eps)) * silu(z)`.
//!
//! Both compute in the backend's float type; the reference computes in f32 and casts back,
//! which is the same thing when the model runs in f32.

use burn::module::{Module, Param};
use burn::tensor::Tensor;
use burn::tensor::activation::silu;
use burn::tensor::backend::Backend;

/// Normalises `x` over its last axis: `x * rsqrt(mean(x^2, -1) + eps)`.
fn rms_normalise<B: Backend, const D: usize>(x: Tensor<B, D>, eps: f64) -> Tensor<B, D> {
    let variance = x.clone().powi_scalar(2).mean_dim(D - 1);
    x * variance.add_scalar(eps).sqrt().recip()
}

/// RMSNorm with a `(1 + weight)` scale.
#[derive(Module, Debug)]
pub struct RmsNorm1p<B: Backend> {
    /// Offset from one, `[dim]` (HF key `*.weight`, initialised to zero).
    pub weight: Param<Tensor<B, 1>>,
    /// Added to the mean square (`rms_norm_eps`).
    pub eps: f64,
}

impl<B: Backend> RmsNorm1p<B> {
    /// Wraps a loaded weight.
    pub fn new(weight: Tensor<B, 1>, eps: f64) -> Self {
        Self {
            weight: Param::from_tensor(weight),
            eps,
        }
    }

    /// A fresh norm (weight zero, i.e. scale one), as transformers initialises it.
    pub fn init(dim: usize, eps: f64, device: &B::Device) -> Self {
        Self::new(Tensor::zeros([dim], device), eps)
    }

    /// Applies the norm over the last axis.
    ///
    /// # Shapes
    /// - x: `[..., dim]`
    /// - output: `[..., dim]`
    pub fn forward<const D: usize>(&self, x: Tensor<B, D>) -> Tensor<B, D> {
        let scale = self.weight.val().add_scalar(1.0).unsqueeze::<D>();
        rms_normalise(x, self.eps) * scale
    }
}

/// RMSNorm followed by a SiLU gate, shared across heads.
#[derive(Module, Debug)]
pub struct RmsNormGated<B: Backend> {
    /// Plain scale, `[dim]` (HF key `linear_attn.norm.weight`, initialised to one).
    pub weight: Param<Tensor<B, 1>>,
    /// Added to the mean square (`rms_norm_eps`).
    pub eps: f64,
}

impl<B: Backend> RmsNormGated<B> {
    /// Wraps a loaded weight.
    pub fn new(weight: Tensor<B, 1>, eps: f64) -> Self {
        Self {
            weight: Param::from_tensor(weight),
            eps,
        }
    }

    /// A fresh norm (weight one), as transformers initialises it.
    pub fn init(dim: usize, eps: f64, device: &B::Device) -> Self {
        Self::new(Tensor::ones([dim], device), eps)
    }

    /// Normalises `x` over its last axis, scales, then gates with `silu(z)`.
    ///
    /// # Shapes
    /// - x: `[..., dim]`
    /// - z: `[..., dim]`
    /// - output: `[..., dim]`
    pub fn forward<const D: usize>(&self, x: Tensor<B, D>, z: Tensor<B, D>) -> Tensor<B, D> {
        let scale = self.weight.val().unsqueeze::<D>();
        rms_normalise(x, self.eps) * scale * silu(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestBackend;
    use burn::tensor::TensorData;

    #[test]
    fn one_plus_weight_form_matches_hand_computation() {
        let dev = Default::default();
        let norm = RmsNorm1p::<TestBackend>::new(Tensor::from_floats([0.5, -0.5], &dev), 0.0);
        // rms of [3, 4] is sqrt(12.5); scales are 1.5 and 0.5.
        let y = norm.forward(Tensor::<TestBackend, 2>::from_floats([[3.0, 4.0]], &dev));
        let r = 12.5f32.sqrt();
        y.into_data().assert_approx_eq(
            &TensorData::from([[3.0 / r * 1.5, 4.0 / r * 0.5]]),
            burn::tensor::Tolerance::<f32>::absolute(1e-6),
        );
    }

    #[test]
    fn gated_form_normalises_then_gates() {
        let dev = Default::default();
        let norm = RmsNormGated::<TestBackend>::new(Tensor::from_floats([2.0, 1.0], &dev), 0.0);
        let x = Tensor::<TestBackend, 2>::from_floats([[3.0, 4.0]], &dev);
        let z = Tensor::<TestBackend, 2>::from_floats([[0.0, 1.0]], &dev);
        let r = 12.5f32.sqrt();
        let silu1 = 1.0 / (1.0 + (-1.0f32).exp());
        norm.forward(x, z).into_data().assert_approx_eq(
            &TensorData::from([[0.0, 4.0 / r * silu1]]),
            burn::tensor::Tolerance::<f32>::absolute(1e-6),
        );
    }
}
