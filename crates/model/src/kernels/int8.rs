//! Int8 weights with blockwise scales, made at load time (`--quantize int8`), for the CPU.
//!
//! Each run of [`BLOCK`] consecutive weights of a row-major `[k, n]` weight (or of a stack
//! `[experts, k, n]`) shares one f32 scale `s = max|w| / 127`, and holds `q = round(w / s)` in
//! `-127..=127`: symmetric 8-bit blocks as in llama.cpp's Q8_0 (there the blocks run along the
//! input dimension; here, in burn's `[in, out]` layout, along the output dimension, which
//! keeps a kernel row's scales contiguous). Storage is burn-flex's own block-quantized tensor
//! (`QuantValue::Q8S`, `QuantLevel::Block([32])`, `QuantStore::Native`), so the model's
//! `Param`s hold it unchanged; [`super::few_rows`] and [`super::panel`] read it in place and
//! never dequantize a whole matrix. 1.125 bytes a weight (the int8 value and a quarter of a
//! byte of scale), against 2 in bf16 and 4 in f32.

use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use burn::tensor::quantization::{
    BlockSize, QuantLevel, QuantMode, QuantParam, QuantScheme, QuantStore, QuantValue,
};

/// Weights per scale.
pub const BLOCK: usize = 32;

/// Bytes per weight of the int8 format, scales included.
pub const BYTES_PER_WEIGHT: f64 = 1.0 + 4.0 / BLOCK as f64;

/// burn's description of the format.
pub fn scheme() -> QuantScheme {
    QuantScheme::default()
        .with_value(QuantValue::Q8S)
        .with_mode(QuantMode::Symmetric)
        .with_level(QuantLevel::Block(BlockSize::new([BLOCK as u8])))
        .with_param(QuantParam::F32)
        .with_store(QuantStore::Native)
}

/// Whether a weight whose last dimension is `n` is quantized: its blocks must not cross rows
/// (`n` a multiple of [`BLOCK`]). Narrower weights (the shared-expert gate `[hidden, 1]`, a
/// tiny model's router) stay in their dtype.
pub fn quantizable(n: usize) -> bool {
    n.is_multiple_of(BLOCK) && n > 0
}

/// `w` (f32) as int8 blocks, on a CPU backend; `None` where the format does not apply (a GPU
/// backend, or a last dimension that is not a multiple of [`BLOCK`]).
///
/// # Shapes
/// - w: `[..., n]`; output the same shape
pub fn quantize<B: Backend, const D: usize>(w: Tensor<B, D>) -> Option<Tensor<B, D>> {
    if !super::is_flex::<B>() || !quantizable(w.dims()[D - 1]) {
        return None;
    }
    Some(w.quantize_dynamic(&scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestBackend as B;
    use burn::tensor::{Distribution, Tolerance};

    /// A quantized weight multiplies like its dequantized self through every kernel path (one
    /// row, a few rows, the prefill panel), and within one step of the block's scale of the
    /// f32 original.
    #[test]
    fn int8_products_equal_the_dequantized_weight() {
        let dev = Default::default();
        let w = Tensor::<B, 2>::random([96, 160], Distribution::Normal(0.0, 0.05), &dev);
        let q = quantize(w.clone()).expect("flex, 160 = 5 blocks");
        assert!(matches!(q.dtype(), burn::tensor::DType::QFloat(_)));
        let deq = q.clone().dequantize();
        let err = (deq.clone() - w.clone()).abs().max().into_scalar();
        let bound = w.clone().abs().max().into_scalar() / 127.0 * 0.5 + 1e-7;
        assert!(err <= bound, "{err} > half a step {bound}");
        for m in [1, 3, 8, 9, 40] {
            let x = Tensor::<B, 2>::random([m, 96], Distribution::Normal(0.0, 1.0), &dev);
            let want = x.clone().matmul(deq.clone());
            super::super::matmul(x, q.clone())
                .into_data()
                .assert_approx_eq(&want.into_data(), Tolerance::<f32>::absolute(1e-4));
        }
    }

    #[test]
    fn narrow_weights_stay_unquantized() {
        let w = Tensor::<B, 2>::zeros([64, 1], &Default::default());
        assert!(quantize(w).is_none());
    }
}
