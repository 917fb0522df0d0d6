//! Weight matrices as the CPU kernels read them: dense rows of f32, bf16 or f16, or int8
//! blocks with one f32 scale each, always widened to f32 in registers as they are multiplied,
//! never into a second copy of the matrix.
//!
//! Layout (burn's `Linear` layout): `w` is `[k, n]`, row stride `ld`, unit column stride. The
//! int8 layout ([`Q8`]) follows burn-flex's block quantization (`QuantLevel::Block([32])`,
//! symmetric, `QuantValue::Q8S`): every run of [`crate::kernels::int8::BLOCK`] consecutive
//! weights of the row-major tensor shares one scale, `w[t, j] = q[t, j] * scale[(t * ld + j) /
//! 32]`.

use half::{bf16, f16};

use super::int8::BLOCK;

/// An element type a weight can be stored in, widened to f32 on use.
pub trait WeightElem: Copy + Send + Sync + 'static {
    /// The value as f32 (exact for every type here).
    fn widen(self) -> f32;
}

impl WeightElem for f32 {
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

impl WeightElem for bf16 {
    /// bf16 is the top half of an f32: a shift, which vectorises.
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self.to_bits() as u32) << 16)
    }
}

impl WeightElem for f16 {
    /// Branch-free IEEE half to single (vectorises; `half`'s own conversion checks the CPU on
    /// every call): the exponent and mantissa are moved into place and rebased by 2^112, which
    /// also scales subnormals right; infinities and NaNs get the full exponent back.
    #[inline(always)]
    fn widen(self) -> f32 {
        let h = self.to_bits() as u32;
        let sign = (h & 0x8000) << 16;
        let em = (h & 0x7fff) << 13;
        let rebased = f32::from_bits(em) * f32::from_bits(0x7780_0000); // 2^112
        let magnitude = if em >= 0x0f80_0000 {
            f32::from_bits(em | 0x7f80_0000)
        } else {
            rebased
        };
        f32::from_bits(magnitude.to_bits() | sign)
    }
}

/// A `[k, n]` weight matrix one task of the few-rows kernel multiplies a block of.
pub trait Weights: Sync {
    /// `acc[i, :] += sum_{t in rows} x[i, t] * w[t, cols]`, `acc` being `[m, cols.len()]`
    /// and `x` `[m, >= rows.end]` with row stride `ldx`. `cols.start` is a multiple of 32.
    /// `stream`: `m` is 1 and `cols` are whole rows, so one row of `w` at a time reads the
    /// weights as one sequential stream (the sums run in the same order either way).
    #[allow(clippy::too_many_arguments)]
    fn rows_times_block(
        &self,
        x: &[f32],
        ldx: usize,
        m: usize,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        stream: bool,
        acc: &mut [f32],
    );

    /// Writes `w[rows, cols]` widened to f32 into `out` (`[rows.len(), cols.len()]`,
    /// contiguous): a panel for the prefill GEMM.
    fn widen_panel(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        out: &mut [f32],
    );
}

/// Dense rows of `T`.
pub struct Dense<'a, T> {
    /// `[k, n]` with row stride `ld`.
    pub data: &'a [T],
    /// Elements between rows.
    pub ld: usize,
}

/// Int8 blocks with f32 scales (see the module docs).
pub struct Q8<'a> {
    /// `[k, n]` quantized values with row stride `ld`.
    pub data: &'a [i8],
    /// One scale per [`BLOCK`] consecutive values of `data`.
    pub scales: &'a [f32],
    /// Elements between rows (a multiple of [`BLOCK`]).
    pub ld: usize,
}

/// `a + x * b`, fused where `FMA` (the CPU has it and the caller is compiled for it).
#[inline(always)]
fn madd<const FMA: bool>(a: f32, x: f32, b: f32) -> f32 {
    if FMA { x.mul_add(b, a) } else { a + x * b }
}

#[cfg(target_arch = "x86_64")]
fn fma_available() -> bool {
    use std::sync::OnceLock;
    static FMA: OnceLock<bool> = OnceLock::new();
    *FMA.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

impl<T: WeightElem> Weights for Dense<'_, T> {
    fn rows_times_block(
        &self,
        x: &[f32],
        ldx: usize,
        m: usize,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        stream: bool,
        acc: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        if fma_available() {
            // SAFETY: the CPU supports AVX2 and FMA (checked above).
            unsafe { dense_avx2(self, x, ldx, m, rows, cols, stream, acc) };
            return;
        }
        dense_with::<false, T>(self, x, ldx, m, rows, cols, stream, acc);
    }

    fn widen_panel(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        out: &mut [f32],
    ) {
        let width = cols.len();
        for (t, o) in rows.zip(out.chunks_exact_mut(width)) {
            let src = &self.data[t * self.ld + cols.start..][..width];
            for (o, &v) in o.iter_mut().zip(src) {
                *o = v.widen();
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn dense_avx2<T: WeightElem>(
    w: &Dense<'_, T>,
    x: &[f32],
    ldx: usize,
    m: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    stream: bool,
    acc: &mut [f32],
) {
    dense_with::<true, T>(w, x, ldx, m, rows, cols, stream, acc);
}

/// The loop itself: rows of `w` in memory order, four at a time (a quarter of the accumulator
/// traffic), each multiplied into every accumulator row, or one at a time when `stream` (`FMA`:
/// fused multiply-add, for CPUs that have it).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dense_with<const FMA: bool, T: WeightElem>(
    w: &Dense<'_, T>,
    x: &[f32],
    ldx: usize,
    m: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    stream: bool,
    acc: &mut [f32],
) {
    let width = cols.len();
    let madd = madd::<FMA>;
    let row = |t: usize| &w.data[t * w.ld + cols.start..][..width];
    let mut t = rows.start;
    while !stream && t + 4 <= rows.end {
        let (w0, w1, w2, w3) = (row(t), row(t + 1), row(t + 2), row(t + 3));
        for (i, arow) in acc.chunks_exact_mut(width).enumerate().take(m) {
            let xs = &x[i * ldx + t..][..4];
            let (x0, x1, x2, x3) = (xs[0], xs[1], xs[2], xs[3]);
            for j in 0..width {
                let s = madd(arow[j], x0, w0[j].widen());
                let s = madd(s, x1, w1[j].widen());
                let s = madd(s, x2, w2[j].widen());
                arow[j] = madd(s, x3, w3[j].widen());
            }
        }
        t += 4;
    }
    for t in t..rows.end {
        let wrow = row(t);
        for (i, arow) in acc.chunks_exact_mut(width).enumerate().take(m) {
            let xv = x[i * ldx + t];
            for (a, &b) in arow.iter_mut().zip(wrow) {
                *a = madd(*a, xv, b.widen());
            }
        }
    }
}

impl Weights for Q8<'_> {
    fn rows_times_block(
        &self,
        x: &[f32],
        ldx: usize,
        m: usize,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        stream: bool,
        acc: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        if fma_available() {
            // SAFETY: the CPU supports AVX2 and FMA (checked above).
            unsafe { q8_avx2(self, x, ldx, m, rows, cols, stream, acc) };
            return;
        }
        q8_with::<false>(self, x, ldx, m, rows, cols, stream, acc);
    }

    fn widen_panel(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        out: &mut [f32],
    ) {
        let width = cols.len();
        for (t, o) in rows.zip(out.chunks_exact_mut(width)) {
            let at = t * self.ld + cols.start;
            // `cols.start` and `ld` are multiples of BLOCK: one scale per 32 outputs.
            for (b, o) in o.chunks_mut(BLOCK).enumerate() {
                let s = self.scales[at / BLOCK + b];
                let q = &self.data[at + b * BLOCK..][..o.len()];
                for (o, &v) in o.iter_mut().zip(q) {
                    *o = v as f32 * s;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn q8_avx2(
    w: &Q8<'_>,
    x: &[f32],
    ldx: usize,
    m: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    stream: bool,
    acc: &mut [f32],
) {
    q8_with::<true>(w, x, ldx, m, rows, cols, stream, acc);
}

/// `acc += (x * scale) * q` for one int8 row of whole blocks (`q.len() == acc.len() ==
/// BLOCK * scales.len()`), in AVX2 intrinsics: LLVM leaves the portable loop scalar here.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn q8_row_avx2(q: &[i8], scales: &[f32], x: f32, acc: &mut [f32]) {
    use std::arch::x86_64::*;
    assert!(q.len() == acc.len() && q.len() == scales.len() * BLOCK);
    let (qp, ap) = (q.as_ptr(), acc.as_mut_ptr());
    for (b, &s) in scales.iter().enumerate() {
        let xs = _mm256_set1_ps(x * s);
        for l in 0..BLOCK / 8 {
            let at = b * BLOCK + l * 8;
            // SAFETY: `at + 8 <= q.len() == acc.len()` (asserted above); unaligned loads.
            unsafe {
                let bytes = _mm_loadl_epi64(qp.add(at) as *const __m128i);
                let wv = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
                let a = _mm256_loadu_ps(ap.add(at));
                _mm256_storeu_ps(ap.add(at), _mm256_fmadd_ps(xs, wv, a));
            }
        }
    }
}

/// As [`dense_with`], block by block: within a block of 32 columns a row's scale is one
/// number, folded into `x` (`(x * scale) * q`), so the inner loop is one widening and one
/// multiply-add per weight, as for bf16. With `stream` (one row of `x` against whole rows
/// of `w`), one row of `w` at a time, through [`q8_row_avx2`] where the CPU has AVX2.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn q8_with<const FMA: bool>(
    w: &Q8<'_>,
    x: &[f32],
    ldx: usize,
    m: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    stream: bool,
    acc: &mut [f32],
) {
    let width = cols.len();
    let madd = madd::<FMA>;
    // One row of `x` against whole rows of whole blocks: the AVX2 row kernel (the portable
    // loop for it is the row-at-a-time loop below, which `stream` also selects).
    #[cfg(target_arch = "x86_64")]
    if FMA && stream && width.is_multiple_of(BLOCK) {
        let acc = &mut acc[..width];
        for t in rows {
            let at = t * w.ld + cols.start;
            // SAFETY: FMA is only set by `q8_avx2`, whose caller checked AVX2 and FMA.
            unsafe {
                q8_row_avx2(
                    &w.data[at..][..width],
                    &w.scales[at / BLOCK..][..width / BLOCK],
                    x[t],
                    acc,
                )
            };
        }
        return;
    }
    let mut t = rows.start;
    while !stream && t + 4 <= rows.end {
        for b0 in (0..width).step_by(BLOCK) {
            let bw = BLOCK.min(width - b0);
            let base = |r: usize| (t + r) * w.ld + cols.start + b0;
            let seg = |r: usize| &w.data[base(r)..][..bw];
            let scale = |r: usize| w.scales[base(r) / BLOCK];
            let (q0, q1, q2, q3) = (seg(0), seg(1), seg(2), seg(3));
            let (s0, s1, s2, s3) = (scale(0), scale(1), scale(2), scale(3));
            for (i, arow) in acc.chunks_exact_mut(width).enumerate().take(m) {
                let xs = &x[i * ldx + t..][..4];
                let (x0, x1, x2, x3) = (xs[0] * s0, xs[1] * s1, xs[2] * s2, xs[3] * s3);
                let a = &mut arow[b0..b0 + bw];
                for j in 0..bw {
                    let s = madd(a[j], x0, q0[j] as f32);
                    let s = madd(s, x1, q1[j] as f32);
                    let s = madd(s, x2, q2[j] as f32);
                    a[j] = madd(s, x3, q3[j] as f32);
                }
            }
        }
        t += 4;
    }
    for t in t..rows.end {
        for b0 in (0..width).step_by(BLOCK) {
            let bw = BLOCK.min(width - b0);
            let at = t * w.ld + cols.start + b0;
            let (q, s) = (&w.data[at..][..bw], w.scales[at / BLOCK]);
            for (i, arow) in acc.chunks_exact_mut(width).enumerate().take(m) {
                let xv = x[i * ldx + t] * s;
                for (a, &b) in arow[b0..b0 + bw].iter_mut().zip(q) {
                    *a = madd(*a, xv, b as f32);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every one of the 65536 halves, NaNs, infinities and subnormals included, widens to
    /// exactly what the `half` crate says.
    #[test]
    fn f16_widening_is_exact_for_every_value() {
        for bits in 0..=u16::MAX {
            let h = f16::from_bits(bits);
            let (ours, theirs) = (h.widen(), h.to_f32());
            if theirs.is_nan() {
                assert!(ours.is_nan(), "{bits:#06x}");
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{bits:#06x}");
            }
        }
    }

    #[test]
    fn bf16_widening_is_exact() {
        for v in [0.0f32, -0.0, 1.0, -2.5, 3.0e38, 1.0e-40, f32::INFINITY] {
            let b = bf16::from_f32(v);
            assert_eq!(b.widen().to_bits(), b.to_f32().to_bits());
        }
    }
}
