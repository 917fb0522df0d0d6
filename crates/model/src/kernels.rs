//! Our own kernels, for the products burn's generic ops cannot bring to the hardware bound, and
//! the one place where weights of another precision meet the f32 activations.
//!
//! Each kernel sits behind a function that takes and returns ordinary burn tensors and falls
//! back to plain burn ops wherever the kernel does not apply (another backend, an unsupported
//! layout), so the model has one definition on every backend and the kernels change speed
//! only. The unit tests compare each kernel with the plain op.
//!
//! Activations are f32 everywhere; a weight is f32, bf16, f16 or (CPU) int8 blocks
//! ([`crate::dtype`]). [`matmul`] returns f32 whatever the weight:
//! - burn-flex (CPU): [`few_rows`] for at most [`few_rows::MAX_ROWS`] rows (the decode-shaped
//!   product, which the `gemm` crate behind burn-flex runs on one thread), widening half and
//!   int8 weights in registers; [`panel`] for more rows of a half or int8 weight (prefill:
//!   the weight is widened one cache-sized panel at a time into the f32 GEMM, never whole);
//! - GPU backends: the activation is cast to the weight's dtype, the product runs there in that
//!   dtype (as transformers does in bf16: f32 accumulation inside, the output rounded), and
//!   the output is cast back to f32.

pub mod few_rows;
pub mod int8;
pub mod panel;
pub mod weights;

use std::any::{Any, TypeId};

use burn::nn::Linear;
use burn::tensor::backend::Backend;
use burn::tensor::{DType, FloatDType, Shape, Tensor, TensorData, TensorPrimitive};
use burn_flex::FlexTensor;
use half::{bf16, f16};

use weights::{Dense, Q8, WeightElem, Weights};

/// `x @ w` in f32 for an f32 `x` and a weight of any supported dtype, through our kernels on
/// burn-flex and burn's `matmul` elsewhere (see the module docs).
///
/// # Shapes
/// - x: `[..., m, k]`
/// - w: `[..., k, n]` (leading dims all 1 for the kernels; burn broadcasts them otherwise)
/// - output: `[..., m, n]`, in `x`'s dtype
pub fn matmul<B: Backend, const D: usize>(x: Tensor<B, D>, w: Tensor<B, D>) -> Tensor<B, D> {
    if let Some(out) = flex_product(&x, &w, 0) {
        return out;
    }
    let (xd, wd) = (x.dtype(), w.dtype());
    if xd == wd {
        return x.matmul(w);
    }
    if wd == DType::I8 {
        // A layout the int8 kernels do not read (not reached by the model's own weights).
        return x.matmul(int8::dequantize(w).cast(xd));
    }
    if is_host::<B>() {
        // A layout the kernels do not read (a transposed view): widen this weight.
        return x.matmul(w.cast(xd));
    }
    x.cast(wd).matmul(w).cast(xd)
}

/// `x @ w[expert]` for one expert of stacked weights, without slicing a quantized tensor
/// (burn would dequantize it).
///
/// # Shapes
/// - x: `[1, m, k]`
/// - w: `[experts, k, n]`
/// - output: `[1, m, n]`
pub fn matmul_expert<B: Backend>(x: Tensor<B, 3>, w: &Tensor<B, 3>, expert: usize) -> Tensor<B, 3> {
    if let Some(out) = flex_product(&x, w, expert) {
        return out;
    }
    let [_, k, n] = w.dims();
    matmul(x, w.clone().slice([expert..expert + 1, 0..k, 0..n]))
}

/// `layer.forward(x)` (`x @ weight + bias`), with the product through [`matmul`] (so the
/// weight may be held in any supported dtype).
///
/// # Shapes
/// - x: `[..., d_input]`; output `[..., d_output]`
pub fn linear<B: Backend, const D: usize>(layer: &Linear<B>, x: Tensor<B, D>) -> Tensor<B, D> {
    let weight = layer.weight.val();
    let [k, n] = weight.dims();
    let dims = x.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    let mut out_dims = dims;
    out_dims[D - 1] = n;
    let out = matmul(x.reshape([rows, k]), weight).reshape(out_dims);
    match &layer.bias {
        Some(bias) => out + bias.val().cast(FloatDType::F32).unsqueeze(),
        None => out,
    }
}

/// `t` in f32: rows gathered from a weight held in its own dtype (the embedding's output)
/// join the f32 residual stream. A no-op on f32.
///
/// # Shapes
/// - t: any; output the same shape
pub fn widen<B: Backend, const D: usize>(t: Tensor<B, D>) -> Tensor<B, D> {
    t.cast(FloatDType::F32)
}

/// Whether `B` keeps its tensors in host memory as burn-flex (the CPU backend our kernels and
/// the int8 format serve).
pub fn is_host<B: Backend>() -> bool {
    TypeId::of::<B::FloatTensorPrimitive>() == TypeId::of::<FlexTensor>()
}

/// A weight as the flex kernels see it.
enum FlexWeight {
    Dense(FlexTensor),
    /// Int8 blocks ([`int8`]): values then scales in one buffer.
    Q8(FlexTensor),
}

/// The burn-flex tensor behind `t`, if `B` is burn-flex (a cheap clone: storage is shared).
fn to_flex<B: Backend, const D: usize>(t: &Tensor<B, D>) -> Option<FlexWeight> {
    if !is_host::<B>() {
        return None;
    }
    match t.clone().into_primitive() {
        TensorPrimitive::Float(p) => (Box::new(p) as Box<dyn Any>)
            .downcast::<FlexTensor>()
            .ok()
            .map(|b| {
                if b.dtype() == DType::I8 {
                    FlexWeight::Q8(*b)
                } else {
                    FlexWeight::Dense(*b)
                }
            }),
        TensorPrimitive::QFloat(_) => None,
    }
}

fn from_flex<B: Backend, const D: usize>(t: FlexTensor) -> Option<Tensor<B, D>> {
    let p = (Box::new(t) as Box<dyn Any>)
        .downcast::<B::FloatTensorPrimitive>()
        .ok()?;
    Some(Tensor::from_primitive(TensorPrimitive::Float(*p)))
}

/// A matrix inside a flex tensor: rows `[r, c]` with row stride `ld`, unit column stride, from
/// `offset` in the storage. Leading dims must be 1 (or collapse into rows with one stride).
fn matrix_view(t: &FlexTensor) -> Option<(usize, usize, usize, usize)> {
    let layout = t.layout();
    let shape = layout.shape();
    let strides = layout.strides();
    let d = shape.num_dims();
    if d < 2 || strides[d - 1] != 1 || strides.iter().any(|&s| s < 0) {
        return None;
    }
    let (rows, cols, ld) = (shape[d - 2], shape[d - 1], strides[d - 2] as usize);
    // Leading dims fold into the rows when they step exactly `rows * ld` (or are 1).
    let mut total_rows = rows;
    let mut step = rows * ld;
    for i in (0..d - 2).rev() {
        if shape[i] != 1 && strides[i] as usize != step {
            return None;
        }
        total_rows *= shape[i];
        step *= shape[i];
    }
    Some((total_rows, cols, ld, layout.start_offset()))
}

/// One matrix `[k, n]` of a weight: matrix `index` of a contiguous stack `[.., k, n]` (index 0
/// and any view for a plain matrix), as `(k, n, ld, offset)`.
fn weight_view(t: &FlexTensor, index: usize) -> Option<(usize, usize, usize, usize)> {
    let shape = t.layout().shape();
    let d = shape.num_dims();
    if index == 0 && shape[..d - 2].iter().all(|&s| s == 1) {
        return matrix_view(t);
    }
    if !t.layout().is_contiguous() || index >= shape[..d - 2].iter().product::<usize>() {
        return None;
    }
    let (k, n) = (shape[d - 2], shape[d - 1]);
    Some((k, n, n, t.layout().start_offset() + index * k * n))
}

/// `x @ w[index]` on burn-flex through our kernels; `None` where they do not apply (another
/// backend, a layout they do not read, or f32 weights with more rows than [`few_rows`] takes,
/// which burn's GEMM runs best).
fn flex_product<B: Backend, const D: usize, const E: usize>(
    x: &Tensor<B, D>,
    w: &Tensor<B, E>,
    index: usize,
) -> Option<Tensor<B, D>> {
    let Some(FlexWeight::Dense(xf)) = to_flex(x) else {
        return None;
    };
    if xf.dtype() != DType::F32 {
        return None;
    }
    let (m, k, ldx, x_off) = matrix_view(&xf)?;
    let wf = to_flex(w)?;
    let x_data = &xf.storage::<f32>()[x_off..];
    let mut dims = x.dims();
    let out = match &wf {
        FlexWeight::Dense(t) => {
            let (wk, n, ldw, w_off) = weight_view(t, index)?;
            if m == 0 || wk != k || (t.dtype() == DType::F32 && m > few_rows::MAX_ROWS) {
                return None;
            }
            dims[D - 1] = n;
            match t.dtype() {
                DType::F32 => product(x_data, ldx, m, k, &dense::<f32>(t, w_off, ldw), n),
                DType::BF16 => product(x_data, ldx, m, k, &dense::<bf16>(t, w_off, ldw), n),
                DType::F16 => product(x_data, ldx, m, k, &dense::<f16>(t, w_off, ldw), n),
                _ => return None,
            }
        }
        FlexWeight::Q8(t) => {
            let (values, scales) = int8::parts(t)?;
            let (wk, n, ldw, w_off) = weight_view(t, index)?;
            if m == 0 || wk != k || ldw % int8::BLOCK != 0 || w_off % int8::BLOCK != 0 {
                return None;
            }
            dims[D - 1] = n;
            let q8 = Q8 {
                data: &values[w_off..],
                scales: &scales[w_off / int8::BLOCK..],
                ld: ldw,
            };
            product(x_data, ldx, m, k, &q8, n)
        }
    };
    from_flex(FlexTensor::from_data(TensorData::new(
        out,
        Shape::from(dims.to_vec()),
    )))
}

fn dense<T>(t: &FlexTensor, offset: usize, ld: usize) -> Dense<'_, T>
where
    T: WeightElem + burn::tensor::Element + bytemuck::Pod,
{
    Dense {
        data: &t.storage::<T>()[offset..],
        ld,
    }
}

/// `x [m, k] @ w [k, n]` by the kernel that fits `m`.
fn product<W: Weights>(x: &[f32], ldx: usize, m: usize, k: usize, w: &W, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    if m <= few_rows::MAX_ROWS {
        few_rows::matmul_weights(x, ldx, m, k, w, n, &mut out);
    } else {
        panel::matmul(x, ldx, m, k, w, n, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestBackend;
    use burn::nn::LinearConfig;
    use burn::tensor::{Distribution, Tolerance};

    type B = TestBackend;

    /// The kernel path equals burn's matmul on contiguous inputs, on views (a slice of rows,
    /// one expert of a stacked weight) and on batched 3-d shapes; over `MAX_ROWS` rows it is
    /// burn's matmul itself.
    #[test]
    fn matmul_equals_burn_matmul_on_views_and_batches() {
        let dev = Default::default();
        let normal = Distribution::Normal(0.0, 1.0);
        let x = Tensor::<B, 3>::random([1, 12, 40], normal, &dev);
        let stacked = Tensor::<B, 3>::random([5, 40, 70], normal, &dev);
        for (lo, hi) in [(0, 1), (3, 7), (2, 10), (0, 12)] {
            let rows = x.clone().slice([0..1, lo..hi, 0..40]);
            let w = stacked.clone().slice([3..4, 0..40, 0..70]);
            let want = rows.clone().matmul(w.clone());
            assert!(hi - lo > few_rows::MAX_ROWS || flex_product(&rows, &w, 0).is_some());
            matmul(rows, w)
                .into_data()
                .assert_approx_eq(&want.into_data(), Tolerance::<f32>::absolute(1e-5));
        }
        let x2 = Tensor::<B, 2>::random([3, 40], normal, &dev);
        let w2 = Tensor::<B, 2>::random([40, 9], normal, &dev);
        matmul(x2.clone(), w2.clone())
            .into_data()
            .assert_approx_eq(&x2.matmul(w2).into_data(), Tolerance::<f32>::absolute(1e-5));
    }

    #[test]
    fn linear_equals_burn_linear_with_and_without_bias() {
        let dev = Default::default();
        for bias in [false, true] {
            let layer = LinearConfig::new(24, 33).with_bias(bias).init::<B>(&dev);
            for seq in [1, 4, 20] {
                let x = Tensor::<B, 3>::random([2, seq, 24], Distribution::Default, &dev);
                linear(&layer, x.clone()).into_data().assert_approx_eq(
                    &layer.forward(x).into_data(),
                    Tolerance::<f32>::absolute(1e-5),
                );
            }
        }
    }

    /// Transposed weights (unit row stride) are not the kernel's layout: burn's op runs.
    #[test]
    fn transposed_weight_falls_back() {
        let dev = Default::default();
        let x = Tensor::<B, 2>::random([2, 8], Distribution::Default, &dev);
        let w = Tensor::<B, 2>::random([6, 8], Distribution::Default, &dev).transpose();
        assert!(flex_product(&x, &w, 0).is_none());
        matmul(x.clone(), w.clone())
            .into_data()
            .assert_approx_eq(&x.matmul(w).into_data(), Tolerance::<f32>::absolute(1e-6));
    }

    /// A bf16 or f16 weight multiplies like its f32 widening on every path: few rows, the
    /// prefill panel, one expert of a stack, a transposed view (the fallback), and burn's
    /// `Linear` with a bias; the output is f32.
    #[test]
    fn half_weights_equal_their_f32_widening() {
        let dev = Default::default();
        let normal = Distribution::Normal(0.0, 1.0);
        for dtype in [DType::BF16, DType::F16] {
            let w32 = Tensor::<B, 3>::random([3, 40, 70], normal, &dev);
            let w = w32.clone().cast(dtype);
            let widened = w.clone().cast(DType::F32);
            for m in [1, 3, 8, 9, 40] {
                let x = Tensor::<B, 3>::random([1, m, 40], normal, &dev);
                for e in 0..3 {
                    let want = x
                        .clone()
                        .matmul(widened.clone().slice([e..e + 1, 0..40, 0..70]));
                    let got = matmul_expert(x.clone(), &w, e);
                    assert_eq!(got.dtype(), DType::F32);
                    got.into_data()
                        .assert_approx_eq(&want.into_data(), Tolerance::<f32>::absolute(1e-4));
                }
                let x2 = x.clone().reshape([m, 40]);
                let w2 = w.clone().slice([1..2, 0..40, 0..70]).reshape([40, 70]);
                let want = x2.clone().matmul(w2.clone().cast(DType::F32));
                matmul(x2.clone(), w2.clone())
                    .into_data()
                    .assert_approx_eq(&want.clone().into_data(), Tolerance::<f32>::absolute(1e-4));
                let t = w2.clone().transpose(); // [70, 40] view: not a kernel layout
                let xt = Tensor::<B, 2>::random([m, 70], normal, &dev);
                matmul(xt.clone(), t.clone()).into_data().assert_approx_eq(
                    &xt.matmul(t.cast(DType::F32)).into_data(),
                    Tolerance::<f32>::absolute(1e-4),
                );
            }
            let layer = LinearConfig::new(24, 33).with_bias(true).init::<B>(&dev);
            let half = Linear {
                weight: burn::module::Param::from_tensor(layer.weight.val().cast(dtype)),
                bias: Some(burn::module::Param::from_tensor(
                    layer.bias.as_ref().unwrap().val().cast(dtype),
                )),
            };
            let x = Tensor::<B, 3>::random([2, 5, 24], normal, &dev);
            let want = x
                .clone()
                .matmul(half.weight.val().cast(DType::F32).unsqueeze())
                + half
                    .bias
                    .as_ref()
                    .unwrap()
                    .val()
                    .cast(DType::F32)
                    .unsqueeze();
            linear(&half, x)
                .into_data()
                .assert_approx_eq(&want.into_data(), Tolerance::<f32>::absolute(1e-4));
        }
    }

    /// Half and int8 weights go through our kernels (not the widening fallback) for decode
    /// rows, prefill rows and one expert of a stack.
    #[test]
    fn half_and_int8_weights_take_the_kernel_path() {
        let dev = Default::default();
        let normal = Distribution::Normal(0.0, 1.0);
        let w32 = Tensor::<B, 3>::random([3, 64, 96], normal, &dev);
        let weights = [
            w32.clone().cast(DType::BF16),
            w32.clone().cast(DType::F16),
            int8::quantize(w32).unwrap(),
        ];
        for w in &weights {
            for m in [1, 8, 40] {
                let x = Tensor::<B, 3>::random([1, m, 64], normal, &dev);
                assert!(
                    flex_product(&x, w, 2).is_some(),
                    "{:?}, {m} rows",
                    w.dtype()
                );
            }
        }
    }
}
