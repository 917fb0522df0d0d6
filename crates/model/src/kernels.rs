//! Our own kernels, for the products burn's generic ops cannot bring to the hardware bound.
//!
//! Each kernel sits behind a function that takes and returns ordinary burn tensors and falls
//! back to the plain burn op wherever the kernel does not apply (another backend, another
//! dtype, an unsupported layout), so the model has one definition on every backend and the
//! kernels change speed only. The unit tests compare each kernel with the plain op.
//!
//! - [`few_rows`]: `x @ w` for at most [`few_rows::MAX_ROWS`] rows on burn-flex (the CPU): the
//!   decode-shaped product, which the `gemm` crate behind burn-flex runs on one thread.

pub mod few_rows;

use std::any::{Any, TypeId};

use burn::nn::Linear;
use burn::tensor::backend::Backend;
use burn::tensor::{DType, Shape, Tensor, TensorData, TensorPrimitive};
use burn_flex::FlexTensor;

/// `x @ w`, through [`few_rows`] on burn-flex when `x` has at most [`few_rows::MAX_ROWS`]
/// rows, through burn's `matmul` otherwise.
///
/// # Shapes
/// - x: `[..., m, k]`
/// - w: `[..., k, n]` (leading dims all 1 for the kernel; burn broadcasts them otherwise)
/// - output: `[..., m, n]`
pub fn matmul<B: Backend, const D: usize>(x: Tensor<B, D>, w: Tensor<B, D>) -> Tensor<B, D> {
    match few_rows_flex(&x, &w) {
        Some(out) => out,
        None => x.matmul(w),
    }
}

/// `layer.forward(x)` (`x @ weight + bias`), with the product through [`matmul`].
///
/// # Shapes
/// - x: `[..., d_input]`; output `[..., d_output]`
pub fn linear<B: Backend, const D: usize>(layer: &Linear<B>, x: Tensor<B, D>) -> Tensor<B, D> {
    let weight = layer.weight.val();
    let [k, n] = weight.dims();
    let dims = x.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    if rows > few_rows::MAX_ROWS || !is_flex::<B>() {
        return layer.forward(x);
    }
    let mut out_dims = dims;
    out_dims[D - 1] = n;
    let out = matmul(x.reshape([rows, k]), weight).reshape(out_dims);
    match &layer.bias {
        Some(bias) => out + bias.val().unsqueeze(),
        None => out,
    }
}

fn is_flex<B: Backend>() -> bool {
    TypeId::of::<B::FloatTensorPrimitive>() == TypeId::of::<FlexTensor>()
}

/// The burn-flex tensor behind `t`, if `B` is burn-flex (a cheap clone: storage is shared).
fn to_flex<B: Backend, const D: usize>(t: &Tensor<B, D>) -> Option<FlexTensor> {
    if !is_flex::<B>() {
        return None;
    }
    match t.clone().into_primitive() {
        TensorPrimitive::Float(p) => (Box::new(p) as Box<dyn Any>)
            .downcast::<FlexTensor>()
            .ok()
            .map(|b| *b),
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

fn few_rows_flex<B: Backend, const D: usize>(
    x: &Tensor<B, D>,
    w: &Tensor<B, D>,
) -> Option<Tensor<B, D>> {
    let (xf, wf) = (to_flex(x)?, to_flex(w)?);
    if xf.dtype() != DType::F32 || wf.dtype() != DType::F32 {
        return None;
    }
    let w_dims = w.dims();
    if w_dims[..D - 2].iter().any(|&d| d != 1) {
        return None;
    }
    let (m, k, ldx, x_off) = matrix_view(&xf)?;
    let (wk, n, ldw, w_off) = matrix_view(&wf)?;
    if m == 0 || m > few_rows::MAX_ROWS || wk != k {
        return None;
    }
    let mut out = vec![0f32; m * n];
    few_rows::matmul(
        &xf.storage::<f32>()[x_off..],
        ldx,
        m,
        k,
        &wf.storage::<f32>()[w_off..],
        ldw,
        n,
        &mut out,
    );
    let mut dims = x.dims();
    dims[D - 1] = n;
    from_flex(FlexTensor::from_data(TensorData::new(
        out,
        Shape::from(dims.to_vec()),
    )))
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
            assert!(hi - lo > few_rows::MAX_ROWS || few_rows_flex(&rows, &w).is_some());
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
        assert!(few_rows_flex(&x, &w).is_none());
        matmul(x.clone(), w.clone())
            .into_data()
            .assert_approx_eq(&x.matmul(w).into_data(), Tolerance::<f32>::absolute(1e-6));
    }
}
