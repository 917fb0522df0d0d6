//! Our side of `agentworld bench`: loading, prefill, decode, peak RSS and memory bandwidth,
//! measured on whichever burn backend the run chose.

use std::time::Instant;

use agentworld_model::loader;
use agentworld_model::{Qwen35Moe, Qwen35MoeConfig, TokenBatch};
use anyhow::{Result, bail};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;

use super::{Figures, Plan, Target};
use crate::backend::{BackendKind, OnBackend};
use crate::progress;

/// Runs `job` with bf16 weights and activations on a GPU backend.
pub(super) fn dispatch_bf16(kind: BackendKind, job: Job) -> Result<Figures> {
    let _ = &job;
    match kind {
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => job.run::<burn::backend::Cuda<burn::tensor::bf16>>(Default::default()),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => job.run::<burn::backend::Wgpu<burn::tensor::bf16>>(Default::default()),
        other => bail!(
            "bf16 needs a GPU backend built in; this build runs {} in f32 only \
             (rebuild with `--features cuda` or `--features wgpu`)",
            format!("{other:?}").to_lowercase()
        ),
    }
}

pub(super) struct Job {
    pub(super) target: Target,
    pub(super) plan: Plan,
    /// How our side holds the weights (CPU; a GPU bf16 run holds the backend's element).
    pub(super) options: agentworld_model::LoadOptions,
    /// Bytes per weight, for the weight total.
    pub(super) weight_bytes_per_param: f64,
}

impl OnBackend for Job {
    type Output = Figures;
    fn run<B: Backend>(self, device: B::Device) -> Result<Figures> {
        let host = agentworld_model::DeviceKind::of::<B>(&device).is_host();
        let rss_before = proc_status_bytes("VmRSS");
        let peak_reset = reset_peak_rss();
        let started = Instant::now();
        let (model, config) = match &self.target {
            Target::Dir(dir) => {
                let (config, checkpoint) = loader::open_dir(dir)?;
                let pb = progress::bar(0, "loading weights");
                let (model, _) = loader::load_model_with::<B>(
                    &checkpoint,
                    &config,
                    &device,
                    self.options,
                    &mut |d, t| {
                        pb.set_length(t as u64);
                        pb.set_position(d as u64);
                    },
                )?;
                pb.finish_and_clear();
                (model, config)
            }
            Target::Synthetic(_)
                if host && self.options != agentworld_model::LoadOptions::default() =>
            {
                bail!(
                    "--synthetic builds f32 weights; bench other dtypes on the CPU with a checkpoint (--model DIR)"
                )
            }
            Target::Synthetic(path) => {
                let text = std::fs::read_to_string(path)?;
                let config = Qwen35MoeConfig::from_json_str(&text, &path.display().to_string())?;
                eprintln!("building random weights...");
                (Qwen35Moe::<B>::init(&config, &device), config)
            }
        };
        let load_secs = started.elapsed().as_secs_f64();
        let peak = proc_status_bytes("VmHWM");
        // Host RSS says nothing of weights held on a GPU.
        let peak_rss_delta_bytes = match (host, peak_reset, peak, rss_before) {
            (true, true, Some(p), Some(b)) => Some(p.saturating_sub(b)),
            _ => None,
        };
        let plan = &self.plan;
        eprintln!("running our side...");
        // Warm-up: allocator, thread pool, first-touch of the weights.
        let mut cache = model.new_cache(1, &device);
        argmax(model.forward_last(
            &TokenBatch::single(plan.prompt[..16].to_vec()),
            Some(&mut cache),
        )?)?;
        let mut prefill = Vec::new();
        for _ in 0..plan.repeats {
            let t = Instant::now();
            let mut cache = model.new_cache(1, &device);
            argmax(
                model.forward_last(&TokenBatch::single(plan.prompt.clone()), Some(&mut cache))?,
            )?;
            prefill.push(t.elapsed().as_secs_f64());
        }
        let ttft = median(prefill);
        let single = median(
            (0..plan.repeats)
                .map(|_| {
                    decode(
                        &model,
                        &device,
                        std::slice::from_ref(&plan.prompt),
                        plan.decode_tokens,
                    )
                })
                .collect::<Result<Vec<_>>>()?,
        );
        let batch = median(
            (0..plan.repeats)
                .map(|_| decode(&model, &device, &plan.batch_prompts, plan.decode_tokens))
                .collect::<Result<Vec<_>>>()?,
        );
        // Measured last, so its buffers do not blur the loading figures above.
        eprintln!("measuring memory bandwidth...");
        let bandwidth = if host {
            stream_copy_bandwidth(self.plan.threads)
        } else {
            device_copy_bandwidth::<B>(&device)?
        };
        println!(
            "bandwidth    {:.1} GB/s ({})",
            bandwidth / 1e9,
            if host {
                "STREAM-like copy, host memory"
            } else {
                "device copy"
            }
        );
        Ok(Figures {
            engine: format!(
                "agentworld {} / burn {}",
                env!("CARGO_PKG_VERSION"),
                std::any::type_name::<B>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("?")
            ),
            load_secs,
            peak_rss_delta_bytes,
            weight_bytes: (config.param_counts().total as f64 * self.weight_bytes_per_param) as u64,
            prefill_tok_s: plan.prompt.len() as f64 / ttft,
            ttft_secs: ttft,
            decode_tok_s: plan.decode_tokens as f64 / single,
            batch_decode_tok_s: (plan.batch_prompts.len() * plan.decode_tokens) as f64 / batch,
            experts: None,
            bandwidth,
        })
    }
}

/// Prefills `prompts` (equal lengths) together, then times `steps` greedy decode steps.
fn decode<B: Backend>(
    model: &Qwen35Moe<B>,
    device: &B::Device,
    prompts: &[Vec<u32>],
    steps: usize,
) -> Result<f64> {
    let mut cache = model.new_cache(prompts.len(), device);
    let batch = TokenBatch {
        ids: prompts.to_vec(),
        valid: None,
    };
    let mut next = argmax(model.forward_last(&batch, Some(&mut cache))?)?;
    let t = Instant::now();
    for _ in 0..steps {
        let step = TokenBatch {
            ids: next.iter().map(|&id| vec![id]).collect(),
            valid: None,
        };
        next = argmax(model.forward_last(&step, Some(&mut cache))?)?;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Greedy ids of `[batch, vocab]` logits: the one read-back of a step.
fn argmax<B: Backend>(logits: Tensor<B, 2>) -> Result<Vec<u32>> {
    let ids = logits
        .argmax(1)
        .into_data()
        .convert::<i64>()
        .to_vec::<i64>()
        .map_err(|e| anyhow::anyhow!("reading logits back: {e:?}"))?;
    Ok(ids.into_iter().map(|i| i as u32).collect())
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
/// A field of `/proc/self/status` in bytes (`None` off Linux).
fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets `VmHWM` to the current RSS (Linux ≥ 4.0); `false` where that is not possible.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Bytes per second of `y = y + 1` over a float tensor on a device (read + write counted),
/// sixteen passes per timing; the best of five timings, each synchronised by a one-element
/// read-back. The tensor is 1 GiB on CUDA (long enough to hide launch latency on an H200) and
/// 64 MiB elsewhere, under every wgpu adapter's buffer limit (lavapipe refuses 256 MiB).
fn device_copy_bandwidth<B: Backend>(device: &B::Device) -> Result<f64> {
    const PASSES: usize = 16;
    let cuda = agentworld_model::DeviceKind::of::<B>(device) == agentworld_model::DeviceKind::Cuda;
    let n = if cuda { 1usize << 28 } else { 1usize << 24 };
    let x = Tensor::<B, 1>::ones([n], device);
    let sync = |t: Tensor<B, 1>| -> Result<()> {
        t.narrow(0, 0, 1)
            .into_data()
            .convert::<f32>()
            .to_vec::<f32>()
            .map_err(|e| anyhow::anyhow!("reading back: {e:?}"))?;
        Ok(())
    };
    let passes = |mut y: Tensor<B, 1>| {
        for _ in 0..PASSES {
            y = y.add_scalar(1.0);
        }
        y
    };
    sync(passes(x.clone()))?;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        sync(passes(x.clone()))?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    let bytes = (PASSES * 2 * n * std::mem::size_of::<B::FloatElem>()) as f64;
    Ok(bytes / best)
}

/// Bytes per second of a parallel copy of a 256 MB float32 array into another (read + write
/// counted, as STREAM's copy does); the best of five runs.
fn stream_copy_bandwidth(threads: usize) -> f64 {
    let n = 64 << 20;
    let src = vec![1.0f32; n];
    let mut dst = vec![0.0f32; n];
    let chunk = n.div_ceil(threads.max(1));
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        std::thread::scope(|s| {
            for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(c));
            }
        });
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    (2 * n * 4) as f64 / best
}
