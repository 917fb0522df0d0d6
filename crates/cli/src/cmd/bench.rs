//! `agentworld bench`: speed and memory of our engine beside transformers/PyTorch on the same
//! checkpoint, the same prompt ids and the same thread count, in one invocation.
//!
//! For each checkpoint it measures, on our side:
//! - loading: wall time and peak RSS growth (`VmHWM` after loading minus `VmRSS` before, with
//!   the peak reset through `/proc/self/clear_refs`) against the weight bytes held for compute
//!   (parameters × 4, float32);
//! - prefill tokens/s on one `--prompt-tokens` prompt (median of `--repeats`), the logits of the
//!   last position and their argmax included; the same time is the time to first token;
//! - decode tokens/s of one stream (greedy, `--decode-tokens` steps after that prefill);
//! - decode tokens/s of `--batch` streams together (`--batch-prompt-tokens` each);
//! - the machine's memory bandwidth (a STREAM-like copy over `--threads` threads) and decode as
//!   a share of its roofline: tokens/s × bytes read per token (the active weights but the
//!   embedding table, float32) / bandwidth.
//!
//! Then it runs `tools/bench/torch_bench.py` with the same plan and prints both columns, their
//! ratios, and one machine-readable line per checkpoint:
//! `summary model=<name> decode_vs_torch=<x> prefill_vs_torch=<x> batch8_vs_torch=<x> roofline=<fraction> rss_ratio=<x>`.

mod measure;
mod torch;

use std::path::PathBuf;
use std::process::Command;

use agentworld_model::Qwen35MoeConfig;
use agentworld_model::loader;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::backend::{BackendKind, dispatch};
use crate::paths;
use measure::{Job, dispatch_bf16};
use torch::{python, run_torch};

/// Arguments of `agentworld bench`.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
agentworld bench                                   # the demo model, beside transformers\n  \
agentworld bench --model ~/.cache/agentworld-bench/mid --model public/models/agentworld-demo\n  \
agentworld bench --no-torch --prompt-tokens 128    # our side only\n\n\
The mid-size synthetic checkpoint (~1B parameters, ~150M active) is made by\n  \
python tools/bench/make_synthetic.py --out ~/.cache/agentworld-bench/mid")]
pub struct Args {
    /// Model directory (config.json + safetensors); repeat for several. Default: the demo model.
    #[arg(long)]
    model: Vec<PathBuf>,
    /// Threads for both engines. Default: every core.
    #[arg(long)]
    threads: Option<usize>,
    /// Prompt length for the prefill and single-stream figures.
    #[arg(long, default_value_t = 512)]
    prompt_tokens: usize,
    /// Decode steps per measurement.
    #[arg(long, default_value_t = 32)]
    decode_tokens: usize,
    /// Streams decoded together for the batch figure.
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// Prompt length of each batched stream.
    #[arg(long, default_value_t = 128)]
    batch_prompt_tokens: usize,
    /// Runs per figure; the median is kept.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Python with torch and transformers. Default: $AGENTWORLD_PYTHON, then
    /// ~/.cache/agentworld-venv/bin/python, then python3.
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the PyTorch side (ratios print as n/a).
    #[arg(long)]
    no_torch: bool,
    /// Where the model runs (our side; the PyTorch side runs on the CPU, or on CUDA with
    /// `--backend cuda`).
    #[arg(long, value_enum, default_value = "cpu")]
    backend: BackendKind,
    /// A config.json to build with random weights on the device instead of loading a checkpoint
    /// (shapes too large to write to disk, e.g. tools/bench/qwen3_5_35b_a3b.json); repeatable.
    #[arg(long)]
    synthetic: Vec<PathBuf>,
    /// Weight precisions to measure, comma-separated, each beside the first (ratios
    /// `decode_vs_first`): f32, bf16, f16, int8. On the CPU the weights are held in that
    /// precision and activations stay f32; on a GPU, bf16 runs weights and activations in bf16.
    /// The PyTorch side runs f32 for f32 and bf16 for the others.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "f32")]
    dtype: Vec<Dtype>,
}

/// Float type of a bench run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// 32-bit floats (what parity is checked in).
    F32,
    /// bfloat16 weights.
    Bf16,
    /// IEEE half weights.
    F16,
    /// Int8 blocks for the projections and experts (CPU), the rest bf16.
    Int8,
}

impl Dtype {
    /// Bytes a weight of a matrix product takes.
    fn bytes(self) -> f64 {
        match self {
            Dtype::F32 => 4.0,
            Dtype::Bf16 | Dtype::F16 => 2.0,
            Dtype::Int8 => agentworld_model::kernels::int8::BYTES_PER_WEIGHT,
        }
    }

    /// How our side loads the weights.
    fn options(self) -> agentworld_model::LoadOptions {
        use agentworld_model::{LoadOptions, Quantize, WeightDtype};
        match self {
            Dtype::F32 => LoadOptions::dtype(WeightDtype::F32),
            Dtype::Bf16 => LoadOptions::dtype(WeightDtype::Bf16),
            Dtype::F16 => LoadOptions::dtype(WeightDtype::F16),
            Dtype::Int8 => LoadOptions {
                dtype: WeightDtype::Bf16,
                quantize: Quantize::Int8,
            },
        }
    }

    /// The dtype of the PyTorch side (which has no int8 of this kind, nor our f16 split).
    fn torch(self) -> Self {
        match self {
            Dtype::F32 => Dtype::F32,
            _ => Dtype::Bf16,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
            Dtype::Int8 => "int8",
        }
    }
}

/// A checkpoint directory or a config built with random weights.
#[derive(Debug, Clone)]
enum Target {
    Dir(PathBuf),
    Synthetic(PathBuf),
}

/// What both sides are asked to run (written to a file for the Python side).
#[derive(Debug, Clone, Serialize)]
struct Plan {
    prompt: Vec<u32>,
    batch_prompts: Vec<Vec<u32>>,
    decode_tokens: usize,
    threads: usize,
    repeats: usize,
    /// `cpu` or `cuda`.
    device: String,
    dtype: Dtype,
}

/// One engine's figures on one checkpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Figures {
    engine: String,
    load_secs: f64,
    peak_rss_delta_bytes: Option<u64>,
    weight_bytes: u64,
    prefill_tok_s: f64,
    ttft_secs: f64,
    decode_tok_s: f64,
    batch_decode_tok_s: f64,
    #[serde(default)]
    experts: Option<String>,
    /// Bytes per second of a large copy on the device our side ran on (both directions).
    #[serde(skip)]
    bandwidth: f64,
}

pub fn run(args: Args) -> Result<()> {
    if args.prompt_tokens < 16 || args.batch_prompt_tokens == 0 || args.batch == 0 {
        bail!("--prompt-tokens must be at least 16, --batch and --batch-prompt-tokens at least 1");
    }
    if args.decode_tokens == 0 || args.repeats == 0 {
        bail!("--decode-tokens and --repeats must be at least 1");
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    // burn-flex's matmuls and element-wise kernels run on rayon's global pool.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("setting the thread count")?;
    if args.dtype.is_empty() {
        bail!("--dtype: name at least one of f32, bf16, f16, int8");
    }
    if args.backend != BackendKind::Cpu
        && args
            .dtype
            .iter()
            .any(|d| matches!(d, Dtype::Int8 | Dtype::F16))
    {
        bail!("--dtype int8 and f16 are measured on the CPU; on a GPU bench f32 and bf16");
    }
    let mut targets: Vec<Target> = args.model.iter().cloned().map(Target::Dir).collect();
    targets.extend(args.synthetic.iter().cloned().map(Target::Synthetic));
    if targets.is_empty() {
        targets.push(Target::Dir(paths::default_model()));
    }
    if targets.len() > 1 {
        return run_each_apart(&targets);
    }
    let python = (!args.no_torch).then(|| python(&args));
    println!("machine      {threads} threads");
    let mut summaries = Vec::new();
    for target in &targets {
        let (path, synthetic) = match target {
            Target::Dir(p) => (p, false),
            Target::Synthetic(p) => (p, true),
        };
        let name = path
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        let config = if synthetic {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Qwen35MoeConfig::from_json_str(&text, &path.display().to_string())?
        } else {
            loader::open_dir(path)
                .with_context(|| format!("opening {}", path.display()))?
                .0
        };
        let vocab = config.vocab_size;
        if args.prompt_tokens.max(args.batch_prompt_tokens) + args.decode_tokens
            > config.max_position_embeddings
        {
            bail!(
                "{}: --prompt-tokens + --decode-tokens exceed max_position_embeddings ({})",
                path.display(),
                config.max_position_embeddings
            );
        }
        let mut first_decode = None;
        for &dtype in &args.dtype {
            let plan = Plan {
                prompt: prompt_ids(vocab, args.prompt_tokens, 1),
                batch_prompts: (0..args.batch)
                    .map(|r| prompt_ids(vocab, args.batch_prompt_tokens, 100 + r as u64))
                    .collect(),
                decode_tokens: args.decode_tokens,
                threads,
                repeats: args.repeats,
                device: if args.backend == BackendKind::Cuda {
                    "cuda"
                } else {
                    "cpu"
                }
                .into(),
                dtype: dtype.torch(),
            };
            println!(
                "\nmodel        {} ({}{}), weights {}",
                name,
                path.display(),
                if synthetic { ", random weights" } else { "" },
                dtype.name()
            );
            // PyTorch first: its process ends and frees the GPU (a 35B model in bf16 takes half an
            // H200) before our side allocates.
            let torch = match &python {
                Some(py) => Some(run_torch(py, target, &plan)?),
                None => None,
            };
            let job = Job {
                target: target.clone(),
                plan: plan.clone(),
                options: dtype.options(),
                weight_bytes_per_param: dtype.bytes(),
            };
            let ours = match (dtype, args.backend) {
                (Dtype::Bf16, BackendKind::Cuda | BackendKind::Wgpu) => {
                    dispatch_bf16(args.backend, job)?
                }
                (_, kind) => dispatch(kind, job)?,
            };
            let counts = config.param_counts();
            let embed = (config.vocab_size * config.hidden_size) as u64;
            let bytes_per_token =
                (counts.active - embed + config.hidden_size as u64) as f64 * dtype.bytes();
            print_table(&ours, torch.as_ref());
            let bandwidth = ours.bandwidth;
            let roofline = ours.decode_tok_s * bytes_per_token / bandwidth;
            println!(
                "roofline     decode reads {:.1} MB/token: {:.1}% of the {:.1} GB/s bound ({:.0} tok/s)",
                bytes_per_token / 1e6,
                roofline * 100.0,
                bandwidth / 1e9,
                bandwidth / bytes_per_token
            );
            let ratio = |f: fn(&Figures) -> f64| match &torch {
                Some(t) if f(t) > 0.0 => format!("{:.2}", f(&ours) / f(t)),
                _ => "n/a".to_string(),
            };
            let rss_ratio = match ours.peak_rss_delta_bytes {
                Some(b) => format!("{:.2}", b as f64 / ours.weight_bytes as f64),
                None => "n/a".into(),
            };
            let first = *first_decode.get_or_insert((ours.decode_tok_s, ours.prefill_tok_s));
            summaries.push(format!(
            "summary model={name} dtype={} decode_vs_torch={} prefill_vs_torch={} batch{}_vs_torch={} decode_vs_first={:.2} prefill_vs_first={:.2} roofline={roofline:.3} rss_ratio={rss_ratio}",
            dtype.name(),
            ratio(|f| f.decode_tok_s),
            ratio(|f| f.prefill_tok_s),
            args.batch,
            ratio(|f| f.batch_decode_tok_s),
            ours.decode_tok_s / first.0,
            ours.prefill_tok_s / first.1,
        ));
        }
    }
    println!();
    for s in summaries {
        println!("{s}");
    }
    Ok(())
}

/// Benches each checkpoint in a process of its own (this binary, same arguments, one model), so
/// that one model's freed memory neither hides nor inflates the next one's peak RSS, nor keeps
/// GPU memory; prints their output as it comes and the summary lines together at the end.
fn run_each_apart(targets: &[Target]) -> Result<()> {
    let exe = std::env::current_exe().context("finding this binary to run each model apart")?;
    // Our own arguments minus every --model/--synthetic pair.
    let mut base = Vec::new();
    let mut raw = std::env::args_os().skip(1).peekable();
    while let Some(a) = raw.next() {
        let text = a.to_string_lossy();
        if text == "--model" || text == "--synthetic" {
            raw.next();
        } else if !(text.starts_with("--model=") || text.starts_with("--synthetic=")) {
            base.push(a);
        }
    }
    let mut summaries = Vec::new();
    for target in targets {
        let (flag, path) = match target {
            Target::Dir(p) => ("--model", p),
            Target::Synthetic(p) => ("--synthetic", p),
        };
        let out = Command::new(&exe)
            .args(&base)
            .arg(flag)
            .arg(path)
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running the bench of {}", path.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        for line in stdout.lines() {
            if line.starts_with("summary ") {
                summaries.push(line.to_string());
            } else {
                println!("{line}");
            }
        }
        if !out.status.success() {
            bail!("the bench of {} failed ({})", path.display(), out.status);
        }
    }
    println!();
    for s in summaries {
        println!("{s}");
    }
    Ok(())
}

fn print_table(ours: &Figures, torch: Option<&Figures>) {
    // The ratio column is always "how many times better are we": rates ours / torch, times
    // torch / ours.
    let t = |f: fn(&Figures) -> f64, is_time: bool| -> (String, String) {
        match torch {
            Some(t) => {
                let (a, b) = if is_time {
                    (f(t), f(ours))
                } else {
                    (f(ours), f(t))
                };
                let ratio = if b > 0.0 {
                    format!("{:.2}x", a / b)
                } else {
                    "n/a".into()
                };
                (format!("{:.2}", f(t)), ratio)
            }
            None => ("-".into(), "n/a".into()),
        }
    };
    println!(
        "engines      ours: {} | torch: {}",
        ours.engine,
        torch
            .map(|t| format!(
                "{} (experts: {})",
                t.engine,
                t.experts.as_deref().unwrap_or("?")
            ))
            .unwrap_or_else(|| "not run".into())
    );
    println!(
        "{:<28}{:>14}{:>14}{:>10}",
        "figure", "ours", "torch", "speedup"
    );
    type Row = (&'static str, fn(&Figures) -> f64, bool);
    let rows: [Row; 5] = [
        ("prefill tok/s", |f| f.prefill_tok_s, false),
        ("time to first token (s)", |f| f.ttft_secs, true),
        ("decode tok/s (1 stream)", |f| f.decode_tok_s, false),
        ("decode tok/s (batch)", |f| f.batch_decode_tok_s, false),
        ("load (s)", |f| f.load_secs, true),
    ];
    for (label, f, is_time) in rows {
        let (theirs, ratio) = t(f, is_time);
        println!(
            "{label:<28}{:>14}{theirs:>14}{ratio:>10}",
            format!("{:.2}", f(ours))
        );
    }
    let mb = |b: Option<u64>| b.map_or("n/a".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6));
    println!(
        "{:<28}{:>14}{:>14}",
        "peak RSS growth on load",
        mb(ours.peak_rss_delta_bytes),
        torch.map_or("-".into(), |t| mb(t.peak_rss_delta_bytes))
    );
    println!(
        "{:<28}{:>14}{:>14}",
        "weight bytes",
        mb(Some(ours.weight_bytes)),
        torch.map_or("-".into(), |t| mb(Some(t.weight_bytes)))
    );
}

/// `n` token ids drawn from a fixed generator (SplitMix64), below `vocab` and away from its last
/// hundred ids (where special tokens live).
fn prompt_ids(vocab: usize, n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let range = vocab.saturating_sub(110).max(1) as u64;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (10 + z % range) as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::measure::median;
    use super::*;

    #[test]
    fn prompt_ids_are_fixed_and_in_range() {
        let a = prompt_ids(2950, 512, 1);
        assert_eq!(a, prompt_ids(2950, 512, 1));
        assert_ne!(a, prompt_ids(2950, 512, 2));
        assert!(a.iter().all(|&i| (10..2850).contains(&i)));
        let distinct: std::collections::BTreeSet<u32> = a.iter().copied().collect();
        assert!(distinct.len() > 400);
    }

    #[test]
    fn median_is_the_middle_run() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![5.0]), 5.0);
    }
}
