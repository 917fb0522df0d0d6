//! `out = x @ w` for many rows of `x` and a weight held in bf16, f16 or int8 blocks: the
//! prefill-shaped product on the CPU.
//!
//! burn-flex's own bf16 matmul widens both operands whole into f32 copies on every call (for
//! the LM head of a 152k vocabulary, a 1.2 GB allocation per prefill). Here the weight is
//! widened one column panel at a time, `[k, cols]` floats sized to stay in the L2/L3 cache,
//! and each panel goes straight into the `gemm` crate's f32 kernel (the one burn-flex runs for
//! f32), which writes its columns of `out`. The conversion costs `k * n` widenings against the
//! GEMM's `m * k * n` multiply-adds, so from a few dozen rows up it is noise.
//!
//! Layouts as [`super::few_rows`]: `x` `[m, k]` row stride `ldx`, `out` `[m, n]` contiguous.

use rayon::prelude::*;

use super::weights::Weights;

/// Bytes of one widened panel: `[k, PANEL_BYTES / 4k]` f32 (about the L2 of a core; at least
/// [`MIN_PANEL`] columns), so that each GEMM call has enough columns to split across threads.
const PANEL_BYTES: usize = 4 << 20;

/// Fewest columns of a panel.
const MIN_PANEL: usize = 256;

/// Rows of a panel widened by one task.
const WIDEN_ROWS: usize = 128;

/// `out[m, n] = x[m, k] @ w[k, n]`.
///
/// # Panics
/// If a slice is shorter than its shape and stride require (a caller bug).
pub fn matmul<W: Weights>(
    x: &[f32],
    ldx: usize,
    m: usize,
    k: usize,
    w: &W,
    n: usize,
    out: &mut [f32],
) {
    if !super::few_rows::shapes_hold(x, ldx, m, k, n, out) {
        return;
    }
    let panel_cols = (PANEL_BYTES / (4 * k))
        .next_multiple_of(32)
        .max(MIN_PANEL)
        .min(n);
    let mut buf = vec![0f32; k * panel_cols];
    for c0 in (0..n).step_by(panel_cols) {
        let width = panel_cols.min(n - c0);
        let panel = &mut buf[..k * width];
        panel
            .par_chunks_mut(WIDEN_ROWS * width)
            .enumerate()
            .for_each(|(i, rows)| {
                let r0 = i * WIDEN_ROWS;
                w.widen_panel(r0..r0 + rows.len() / width, c0..c0 + width, rows);
            });
        let parallelism = if m * k * width >= 1 << 18 && rayon::current_num_threads() > 1 {
            gemm::Parallelism::Rayon(0)
        } else {
            gemm::Parallelism::None
        };
        // SAFETY: `x` holds `[m, k]` with row stride `ldx` (checked above), `panel` holds
        // `[k, width]` contiguous, and `out[.., c0..c0 + width]` with row stride `n` lies
        // inside `out` (`out.len() >= m * n`); nothing else aliases `out`.
        unsafe {
            gemm::gemm(
                m,
                width,
                k,
                out.as_mut_ptr().add(c0),
                1,
                n as isize,
                false,
                x.as_ptr(),
                1,
                ldx as isize,
                panel.as_ptr(),
                1,
                width as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::weights::Dense;
    use super::*;
    use half::bf16;

    /// Against an f64 triple loop on the widened weight, with panel widths that do and do not
    /// divide `n`, and strided `x`.
    #[test]
    fn matches_a_triple_loop() {
        for (m, k, n) in [(9, 7, 5), (33, 300, 257), (64, 130, 600)] {
            let ldx = k + 3;
            let x: Vec<f32> = (0..m * ldx)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
                .collect();
            let w: Vec<bf16> = (0..k * n)
                .map(|i| bf16::from_f32(((i * 53 % 97) as f32 - 48.0) / 48.0))
                .collect();
            let mut out = vec![f32::NAN; m * n];
            matmul(&x, ldx, m, k, &Dense { data: &w, ld: n }, n, &mut out);
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|t| x[i * ldx + t] as f64 * w[t * n + j].to_f64())
                        .sum();
                    let got = out[i * n + j] as f64;
                    assert!(
                        (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{m}x{k}x{n} at {i},{j}"
                    );
                }
            }
        }
    }
}
