//! Int8 weights with blockwise scales, made at load time (`--quantize int8`), for the CPU.
//!
//! Each run of [`BLOCK`] consecutive weights of a row-major `[k, n]` weight (or of a stack
//! `[experts, k, n]`) shares one f32 scale `s = max|w| / 127`, and holds `q = round(w / s)` in
//! `-127..=127`: symmetric 8-bit blocks as in llama.cpp's Q8_0 (there the blocks run along the
//! input dimension; here, in burn's `[in, out]` layout, along the output dimension, which
//! keeps a kernel row's scales contiguous). 1.125 bytes a weight (the int8 value and a quarter
//! of a byte of scale), against 2 in bf16 and 4 in f32.
//!
//! Storage: one burn-flex tensor of dtype `I8` in the model's `Param`, shaped like the weight,
//! whose shared byte buffer holds the `numel` int8 values and then the `numel / 32` f32
//! scales. Cloning it (every `Param::val()`) shares the buffer; burn-flex's own quantized
//! tensor would copy its scales on every clone. Only our kernels ([`super::few_rows`],
//! [`super::panel`]) read it, in place; [`dequantize`] widens one for anything else.

use burn::tensor::backend::Backend;
use burn::tensor::{DType, Shape, Tensor, TensorData};
use burn_flex::{FlexTensor, Layout};

/// Weights per scale.
pub const BLOCK: usize = 32;

/// Bytes per weight of the int8 format, scales included.
pub const BYTES_PER_WEIGHT: f64 = 1.0 + 4.0 / BLOCK as f64;

/// Whether a weight whose last dimension is `n` is quantized: its blocks must not cross rows
/// (`n` a multiple of [`BLOCK`]). Narrower weights (the shared-expert gate `[hidden, 1]`, a
/// tiny model's router) stay in their dtype.
pub fn quantizable(n: usize) -> bool {
    n.is_multiple_of(BLOCK) && n > 0
}

/// Whether `w` is held as int8 blocks.
pub fn is_int8<B: Backend, const D: usize>(w: &Tensor<B, D>) -> bool {
    w.dtype() == DType::I8
}

/// `w` as int8 blocks, on the CPU backend; `None` where the format does not apply (a GPU
/// backend, or a last dimension that is not a multiple of [`BLOCK`]).
///
/// # Shapes
/// - w: `[..., n]` (any float dtype); output the same shape
pub fn quantize<B: Backend, const D: usize>(w: Tensor<B, D>) -> Option<Tensor<B, D>> {
    if !super::is_host::<B>() || !quantizable(w.dims()[D - 1]) {
        return None;
    }
    let dims = w.dims();
    let values = w
        .cast(burn::tensor::FloatDType::F32)
        .into_data()
        .into_vec::<f32>()
        .ok()?;
    let numel = values.len();
    // f32 words, so the buffer is 4-aligned and the scales after the values can be read as f32.
    let mut words = vec![0f32; numel / 4 + numel / BLOCK];
    let (q, scales) = words.split_at_mut(numel / 4);
    let q: &mut [i8] = bytemuck::cast_slice_mut(q);
    for ((block, out), scale) in values
        .chunks_exact(BLOCK)
        .zip(q.chunks_exact_mut(BLOCK))
        .zip(scales.iter_mut())
    {
        let max = block.iter().fold(0f32, |a, v| a.max(v.abs()));
        let s = if max > 0.0 && max.is_finite() {
            max / 127.0
        } else {
            1.0
        };
        *scale = s;
        for (o, v) in out.iter_mut().zip(block) {
            *o = (v / s).round().clamp(-127.0, 127.0) as i8;
        }
    }
    let len = words.len();
    let bytes = TensorData::new(words, [len]).bytes;
    let t = FlexTensor::new(
        bytes,
        Layout::contiguous(Shape::from(dims.to_vec())),
        DType::I8,
    );
    super::from_flex(t)
}

/// The int8 values and scales of `t` (an int8 tensor made by [`quantize`]), or `None` for a
/// view that is not the whole tensor.
pub(super) fn parts(t: &FlexTensor) -> Option<(&[i8], &[f32])> {
    if t.dtype() != DType::I8 || !t.layout().is_contiguous() || t.layout().start_offset() != 0 {
        return None;
    }
    let numel = t.layout().shape().num_elements();
    let bytes = t.bytes();
    let q = bytemuck::cast_slice(bytes.get(..numel)?);
    let scales = bytemuck::try_cast_slice(bytes.get(numel..numel + 4 * (numel / BLOCK))?).ok()?;
    Some((q, scales))
}

/// `w` widened to f32 (for a path the int8 kernels do not serve); `w` itself when it is not
/// int8.
pub fn dequantize<B: Backend, const D: usize>(w: Tensor<B, D>) -> Tensor<B, D> {
    let Some(super::FlexWeight::Q8(t)) = super::to_flex(&w) else {
        return w;
    };
    let Some((q, scales)) = parts(&t) else {
        return w;
    };
    let values: Vec<f32> = q
        .iter()
        .enumerate()
        .map(|(i, &v)| v as f32 * scales[i / BLOCK])
        .collect();
    Tensor::from_data(TensorData::new(values, w.dims()), &w.device())
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
        assert!(is_int8(&q));
        let deq = dequantize(q.clone());
        assert_eq!(deq.dtype(), DType::F32);
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
