//! `out = x @ w` for a handful of rows of `x`, on slices: the decode-shaped product.
//!
//! At decode a projection multiplies one row (or one row per stream) by a weight matrix, so
//! the product is bound by how fast the weights stream from memory, not by arithmetic. The
//! `gemm` crate behind burn-flex runs such a product on one thread (below ~7 M multiply-adds it
//! never parallelises), and with two to eight rows it packs the weights first. Here the work
//! is split across rayon's threads into tasks of (column chunk, row range of `w`), and each
//! task walks its rows of `w` in memory order: every weight row segment is read once,
//! contiguously (which the hardware prefetchers stream at full speed), and multiplied into
//! `m` accumulator rows that stay in the L1 cache. When the columns alone do not give every
//! thread work, the rows of `w` are split too and the partial sums are added in a fixed order
//! (so results do not depend on scheduling).
//!
//! Layouts: `x` is `[m, k]` with row stride `ldx` and unit column stride; `w` is `[k, n]` with
//! row stride `ldw` and unit column stride (burn's `Linear` layout, `[d_input, d_output]`);
//! `out` is `[m, n]`, contiguous. Sums run in `k` order with fused multiply-adds where the CPU
//! has them, so results differ from `gemm`'s in the last bits only.

use rayon::prelude::*;

use super::weights::{Dense, WeightElem, Weights};

/// Most rows of `x` worth taking through this kernel (measured with `cargo bench -p
/// agentworld-model --bench few_rows`: above it, gemm's packed kernels win).
pub const MAX_ROWS: usize = 8;

/// Below this many multiply-adds a product runs on the calling thread (a fork costs more).
const PARALLEL_MIN_MACS: usize = 1 << 16;

/// Accumulator floats of one task, `m` rows by the chunk's columns: 16 KB, a quarter of L1.
const CHUNK_FLOATS: usize = 4096;

/// Fewest rows of `w` per task when the rows are split.
const MIN_TASK_ROWS: usize = 64;

/// `out[m, n] = x[m, k] @ w[k, n]` for an f32 or half-precision `w` (see the module docs for
/// layouts).
///
/// # Panics
/// If a slice is shorter than its shape and stride require (a caller bug: shapes come from
/// tensors, not from user input).
#[allow(clippy::too_many_arguments)]
pub fn matmul<T: WeightElem>(
    x: &[f32],
    ldx: usize,
    m: usize,
    k: usize,
    w: &[T],
    ldw: usize,
    n: usize,
    out: &mut [f32],
) {
    if k > 0 && n > 0 {
        assert!(w.len() >= (k - 1) * ldw + n, "w is shorter than [{k}, {n}]");
    }
    matmul_weights(x, ldx, m, k, &Dense { data: w, ld: ldw }, n, out);
}

/// `out[m, n] = x[m, k] @ w[k, n]` for any [`Weights`] (dense or int8 blocks).
///
/// # Panics
/// As [`matmul`].
pub fn matmul_weights<W: Weights>(
    x: &[f32],
    ldx: usize,
    m: usize,
    k: usize,
    w: &W,
    n: usize,
    out: &mut [f32],
) {
    if !shapes_hold(x, ldx, m, k, n, out) {
        return;
    }
    let x = Rows { data: x, ld: ldx };
    let out = &mut out[..m * n];

    // The row split depends on the shape of `w` and the thread count only, never on `m`, so a
    // row's sums are bit-identical whichever batch it is decoded in.
    let threads = rayon::current_num_threads();
    let parallel = m * n * k >= PARALLEL_MIN_MACS && threads > 1;
    let splits = (2 * threads)
        .div_ceil(n.div_ceil(CHUNK_FLOATS / MAX_ROWS))
        .min(k / MIN_TASK_ROWS)
        .max(1);
    let split_rows = k.div_ceil(splits);
    let splits = k.div_ceil(split_rows);
    let chunks = n.div_ceil(CHUNK_FLOATS / m).max(1);
    // Whole int8 blocks per task (32 columns), which also keeps f32 chunks vector-aligned.
    let chunk_cols = n.div_ceil(chunks).next_multiple_of(32).min(n);
    let chunks = n.div_ceil(chunk_cols);
    // One row of `x` against whole rows of `w` (decode, `n` up to CHUNK_FLOATS): the task's
    // weights are one sequential stream, read a row at a time (measured with the few_rows
    // bench: ~1.6x the bytes per second of four interleaved rows there). Column chunks of a
    // wider `w` stride, and there four rows at a time are faster.
    let stream = m == 1 && chunks == 1;

    // Each task writes its own [m, chunk] block of `partial[split]` (row stride n).
    let mut partial = if splits == 1 {
        Vec::new()
    } else {
        vec![0f32; splits * m * n]
    };
    let target = if splits == 1 {
        &mut out[..]
    } else {
        &mut partial[..]
    };
    let blocks = Blocks::new(target, m, n);
    let run = |task: usize| {
        let (split, chunk) = (task / chunks, task % chunks);
        let (k0, k1) = (split * split_rows, ((split + 1) * split_rows).min(k));
        let (c0, c1) = (chunk * chunk_cols, ((chunk + 1) * chunk_cols).min(n));
        let mut acc = vec![0f32; m * (c1 - c0)];
        w.rows_times_block(x.data, x.ld, m, k0..k1, c0..c1, stream, &mut acc);
        // SAFETY: task (split, chunk) is the only writer of that block.
        unsafe { blocks.write(split, c0, c1, &acc) };
    };
    if parallel {
        (0..splits * chunks).into_par_iter().for_each(run);
    } else {
        (0..splits * chunks).for_each(run);
    }
    if splits > 1 {
        out.copy_from_slice(&partial[..m * n]);
        for part in partial[m * n..].chunks_exact(m * n) {
            for (o, p) in out.iter_mut().zip(part) {
                *o += p;
            }
        }
    }
}

/// Checks the slices against `[m, k]` (row stride `ldx`) and `[m, n]`, and settles the empty
/// products (zeros when `k` is 0): `true` when there is a product left to compute. Shared by
/// the few-rows and panel kernels.
///
/// # Panics
/// If a slice is shorter than its shape and stride require (a caller bug).
pub(super) fn shapes_hold(
    x: &[f32],
    ldx: usize,
    m: usize,
    k: usize,
    n: usize,
    out: &mut [f32],
) -> bool {
    assert!(out.len() >= m * n, "out holds {} of {m}x{n}", out.len());
    if m == 0 || n == 0 {
        return false;
    }
    if k == 0 {
        out[..m * n].fill(0.0);
        return false;
    }
    assert!(x.len() >= (m - 1) * ldx + k, "x is shorter than [{m}, {k}]");
    true
}

/// `x`: `ld` floats between rows, unit column stride.
struct Rows<'a> {
    data: &'a [f32],
    ld: usize,
}

/// `splits` stacked `[m, n]` outputs that tasks fill in disjoint `[m, c0..c1]` blocks.
struct Blocks {
    ptr: *mut f32,
    len: usize,
    m: usize,
    n: usize,
}

// SAFETY: tasks write disjoint blocks only (see `Blocks::write`).
unsafe impl Send for Blocks {}
unsafe impl Sync for Blocks {}

impl Blocks {
    fn new(target: &mut [f32], m: usize, n: usize) -> Self {
        Self {
            ptr: target.as_mut_ptr(),
            len: target.len(),
            m,
            n,
        }
    }

    /// Copies `acc` (`[m, c1 - c0]`) into output `split`, columns `c0..c1`.
    ///
    /// # Safety
    /// No other thread writes the same `(split, c0..c1)` block meanwhile.
    unsafe fn write(&self, split: usize, c0: usize, c1: usize, acc: &[f32]) {
        let width = c1 - c0;
        for (i, row) in acc.chunks_exact(width).enumerate() {
            let at = (split * self.m + i) * self.n + c0;
            assert!(at + width <= self.len);
            // SAFETY: in bounds (checked); disjoint from other tasks' blocks (caller).
            unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), self.ptr.add(at), width) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(
        x: &[f32],
        ldx: usize,
        m: usize,
        k: usize,
        w: &[f32],
        ldw: usize,
        n: usize,
    ) -> Vec<f32> {
        let mut out = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f64;
                for t in 0..k {
                    s += x[i * ldx + t] as f64 * w[t * ldw + j] as f64;
                }
                out[i * n + j] = s as f32;
            }
        }
        out
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2654435761).max(1);
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s % 2001) as f32 / 1000.0 - 1.0
            })
            .collect()
    }

    /// Every row count up to past `MAX_ROWS`, column counts that are and are not multiples of
    /// the tile widths and task width, strided `x` and `w` (views into wider matrices), and the
    /// parallel path, all against an f64 triple loop.
    #[test]
    fn matches_a_triple_loop_for_every_shape() {
        for m in 1..=MAX_ROWS + 2 {
            for (k, n) in [(1, 1), (7, 5), (33, 64), (64, 130), (300, 257), (512, 1000)] {
                let (ldx, ldw) = (k + 3, n + 5);
                let x = values(m * ldx, m as u32 + 7);
                let w = values(k * ldw, (k * n) as u32);
                let mut out = vec![f32::NAN; m * n];
                matmul(&x, ldx, m, k, &w, ldw, n, &mut out);
                let want = naive(&x, ldx, m, k, &w, ldw, n);
                for (idx, (a, b)) in out.iter().zip(&want).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                        "m={m} k={k} n={n} at {idx}: {a} vs {b}"
                    );
                }
            }
        }
    }

    /// A row's result does not depend on how many other rows share the product (batched decode
    /// gives each sequence exactly what it gets alone).
    #[test]
    fn a_row_gets_the_same_bits_in_any_batch() {
        let (k, n) = (1024, 768);
        let x = values(MAX_ROWS * k, 3);
        let w = values(k * n, 4);
        let mut all = vec![0f32; MAX_ROWS * n];
        matmul(&x, k, MAX_ROWS, k, &w, n, n, &mut all);
        for m in 1..MAX_ROWS {
            let mut some = vec![0f32; m * n];
            matmul(&x, k, m, k, &w, n, n, &mut some);
            assert!(
                some == all[..m * n],
                "{m} rows differ from the same rows among {MAX_ROWS}"
            );
        }
    }

    #[test]
    fn empty_inner_dimension_gives_zeros() {
        let mut out = vec![f32::NAN; 6];
        matmul::<f32>(&[], 0, 2, 0, &[], 3, 3, &mut out);
        assert_eq!(out, vec![0.0; 6]);
    }
}
