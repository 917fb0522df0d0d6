//! Decode-shaped products, `x [m, k] @ w [k, n]`, through our `kernels::matmul` beside
//! burn-flex's `matmul` (the `gemm` crate) on the same tensors, printing weight bandwidth and
//! the ratio. Shapes are the mid-size bench checkpoint's (`tools/bench/make_synthetic.py`):
//! an expert's gate/up and down projections, the attention q projection, the lm_head.
//!
//! Each product reads a different copy of the weight in turn (256 MB in all), so the figures
//! are memory bandwidth, not cache bandwidth.
//!
//! `cargo bench -p agentworld-model --bench few_rows [-- THREADS] [--prefill-rows]` (default: every
//! core; 1-8 rows).

use std::time::{Duration, Instant};

use agentworld_model::kernels;
use burn::backend::Flex;
use burn::tensor::{Distribution, Tensor, TensorData};

fn time<F: FnMut() -> Tensor<Flex, 2>>(mut f: F) -> Duration {
    // Warm-up, then the median of enough runs to fill ~0.3 s.
    let mut probe = Instant::now();
    let _ = f();
    let once = probe.elapsed().max(Duration::from_micros(1));
    let runs = (Duration::from_millis(300).as_nanos() / once.as_nanos()).clamp(5, 2000) as usize;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        probe = Instant::now();
        let out = f();
        std::hint::black_box(out);
        times.push(probe.elapsed());
    }
    times.sort();
    times[runs / 2]
}

/// Row counts measured: decode (1), batched decode (2-8) and, with `--prefill-rows`, the row
/// groups an expert sees at prefill (16-64).
fn rows_to_try() -> Vec<usize> {
    if std::env::args().any(|a| a == "--prefill-rows") {
        vec![1, 2, 4, 8, 16, 32, 64]
    } else {
        vec![1, 2, 4, 8]
    }
}

fn main() {
    let threads = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("the global thread pool is built once");
    let threads = rayon::current_num_threads();
    let dev = Default::default();
    let normal = Distribution::Normal(0.0, 0.02);
    println!("few-row products on burn-flex, {threads} threads; GB/s counts weight bytes read");
    println!(
        "{:<22} {:>3} {:>12} {:>12} {:>9} {:>10} {:>10}",
        "shape (k x n)", "m", "ours GB/s", "burn GB/s", "speed-up", "bf16 GB/s", "int8 GB/s"
    );
    for (name, k, n) in [
        ("expert gate_up", 1024, 768),
        ("expert down", 384, 1024),
        ("attention q+gate", 1024, 2048),
        ("lm_head", 1024, 32000),
    ] {
        // Enough copies of the weight to overflow the caches, used in turn, as at decode.
        let copies = (256 << 20) / (k * n * 4) + 1;
        let ws: Vec<_> = (0..copies)
            .map(|_| Tensor::<Flex, 2>::random([k, n], normal, &dev))
            .collect();
        let wvs: Vec<Vec<f32>> = ws
            .iter()
            .map(|w| w.to_data().to_vec::<f32>().expect("f32"))
            .collect();
        let gb = (k * n * 4) as f64 / 1e9;
        // The same weights in bf16 and as int8 blocks (each copy half, then about a quarter, of
        // the f32 bytes; GB/s below counts the bytes each format reads).
        let wbs: Vec<Vec<half::bf16>> = wvs
            .iter()
            .map(|w| w.iter().map(|&v| half::bf16::from_f32(v)).collect())
            .collect();
        let q8s: Vec<(Vec<i8>, Vec<f32>)> = wvs.iter().map(|w| quantize(w)).collect();
        for m in rows_to_try() {
            let x = Tensor::<Flex, 2>::random([m, k], normal, &dev);
            let mut i = 0;
            let mut next = || {
                i = (i + 1) % copies;
                ws[i].clone()
            };
            // Our kernel on the same values as plain slices (the tensor wrapping around it
            // costs one output allocation, included here too).
            let xv = x.to_data().to_vec::<f32>().expect("f32");
            let mut j = 0;
            let ours = time(|| {
                j = (j + 1) % copies;
                let mut out = vec![0f32; m * n];
                kernels::few_rows::matmul(&xv, k, m, k, &wvs[j], n, n, &mut out);
                Tensor::<Flex, 2>::from_data(TensorData::new(out, [m, n]), &dev)
            });
            let bf16 = time(|| {
                j = (j + 1) % copies;
                let mut out = vec![0f32; m * n];
                kernels::few_rows::matmul(&xv, k, m, k, &wbs[j], n, n, &mut out);
                Tensor::<Flex, 2>::from_data(TensorData::new(out, [m, n]), &dev)
            });
            let int8 = time(|| {
                j = (j + 1) % copies;
                let mut out = vec![0f32; m * n];
                let w = kernels::weights::Q8 {
                    data: &q8s[j].0,
                    scales: &q8s[j].1,
                    ld: n,
                };
                kernels::few_rows::matmul_weights(&xv, k, m, k, &w, n, &mut out);
                Tensor::<Flex, 2>::from_data(TensorData::new(out, [m, n]), &dev)
            });
            let burn = time(|| x.clone().matmul(next()));
            println!(
                "{:<22} {m:>3} {:>12.1} {:>12.1} {:>8.2}x {:>10.1} {:>10.1}",
                format!("{name} {k}x{n}"),
                gb / ours.as_secs_f64(),
                gb / burn.as_secs_f64(),
                burn.as_secs_f64() / ours.as_secs_f64(),
                gb / 2.0 / bf16.as_secs_f64(),
                gb * kernels::int8::BYTES_PER_WEIGHT / 4.0 / int8.as_secs_f64(),
            );
        }
    }
}

/// `w` as int8 blocks of 32 (see `agentworld_model::kernels::int8`).
fn quantize(w: &[f32]) -> (Vec<i8>, Vec<f32>) {
    let mut q = Vec::with_capacity(w.len());
    let mut scales = Vec::with_capacity(w.len() / 32);
    for block in w.chunks(32) {
        let s = block.iter().fold(0f32, |a, v| a.max(v.abs())) / 127.0;
        let s = if s > 0.0 { s } else { 1.0 };
        scales.push(s);
        q.extend(block.iter().map(|v| (v / s).round() as i8));
    }
    (q, scales)
}
