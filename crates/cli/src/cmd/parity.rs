//! `agentworld parity`: a checkpoint's logits and greedy tokens against a reference run, on any
//! backend and precision (the device check's CUDA parity; no tokenizer needed).
//!
//! The reference is the format `tools/parity/make_fixtures.py` writes (`reference.json` with
//! its `reference.bin` beside, little-endian f32): `prompt` (token ids), `prefill_logits`
//! (`{offset, shape: [seq, vocab]}` into the .bin) and `greedy_single` (the greedy
//! continuation). `tools/device/torch_reference.py` writes the same for PyTorch on a GPU.

use std::path::PathBuf;

use agentworld_model::{TokenBatch, loader};
use anyhow::{Context, Result, bail};
use burn::tensor::Tensor;

use crate::backend::{BackendKind, OnBackend, Precision, dispatch};

/// Arguments of `agentworld parity`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  \
agentworld parity --model crates/model/tests/fixtures/parity/composite \\\n    \
--reference crates/model/tests/fixtures/parity/reference.json --dtype bf16")]
pub struct Args {
    /// Model directory (config.json and safetensors; no tokenizer needed).
    #[arg(long)]
    model: PathBuf,
    /// Reference JSON (`prompt`, `prefill_logits`, `greedy_single`), its .bin beside it.
    #[arg(long)]
    reference: PathBuf,
    /// Largest |Δlogit| allowed over the prefill.
    #[arg(long, default_value_t = 1e-4)]
    tolerance: f32,
    /// Also require the greedy tokens to equal the reference's (off: report the common prefix).
    #[arg(long)]
    greedy: bool,
    /// Where the model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: Precision,
}

/// The reference run, read from its JSON and .bin.
struct Reference {
    prompt: Vec<u32>,
    /// `[seq][vocab]`.
    prefill: Vec<Vec<f32>>,
    greedy: Vec<u32>,
}

fn ids(v: &serde_json::Value, what: &str) -> Result<Vec<u32>> {
    v.as_array()
        .with_context(|| format!("`{what}` is not a list of token ids"))?
        .iter()
        .map(|t| {
            t.as_u64()
                .map(|t| t as u32)
                .with_context(|| format!("`{what}` holds a non-integer"))
        })
        .collect()
}

impl Reference {
    fn read(path: &std::path::Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        let bin = path.with_extension("bin");
        let bytes = std::fs::read(&bin).with_context(|| format!("reading {}", bin.display()))?;
        let blob: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let entry = &json["prefill_logits"];
        let (offset, shape) = (entry["offset"].as_u64(), ids(&entry["shape"], "shape"));
        let (Some(offset), Ok(shape)) = (offset, shape) else {
            bail!(
                "{}: `prefill_logits` needs an offset and a shape",
                path.display()
            );
        };
        let (offset, seq, vocab) = (offset as usize, shape[0] as usize, shape[1] as usize);
        if blob.len() < offset + seq * vocab {
            bail!(
                "{}: holds {} floats, `prefill_logits` needs {}",
                bin.display(),
                blob.len(),
                offset + seq * vocab
            );
        }
        Ok(Self {
            prompt: ids(&json["prompt"], "prompt")?,
            prefill: (0..seq)
                .map(|r| blob[offset + r * vocab..offset + (r + 1) * vocab].to_vec())
                .collect(),
            greedy: ids(&json["greedy_single"], "greedy_single")?,
        })
    }
}

/// What one parity run found.
struct Found {
    max_dlogit: f32,
    greedy: Vec<u32>,
    dtype: String,
}

struct Job<'a> {
    args: &'a Args,
    reference: &'a Reference,
}

impl OnBackend for Job<'_> {
    type Output = Found;
    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<Found> {
        let options = self
            .args
            .precision
            .resolve::<B>(&self.args.model, &device)?;
        let (config, checkpoint) = loader::open_dir(&self.args.model)
            .with_context(|| format!("opening {}", self.args.model.display()))?;
        let (model, _) =
            loader::load_model_with::<B>(&checkpoint, &config, &device, options, &mut |_, _| {})?;
        let prompt = &self.reference.prompt;
        let logits = model.forward(&TokenBatch::single(prompt.clone()), None)?;
        let [_, seq, vocab] = logits.dims();
        if seq != self.reference.prefill.len() || vocab != self.reference.prefill[0].len() {
            bail!(
                "the model gives [{seq}, {vocab}] prefill logits, the reference [{}, {}]",
                self.reference.prefill.len(),
                self.reference.prefill[0].len()
            );
        }
        let ours = rows(logits.reshape([seq, vocab]))?;
        let max_dlogit = ours
            .iter()
            .zip(&self.reference.prefill)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(
                0.0f32,
                |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
            );
        let mut cache = model.new_cache(1, &device);
        let mut last = model.forward_last(&TokenBatch::single(prompt.clone()), Some(&mut cache))?;
        let mut greedy = Vec::new();
        for _ in 0..self.reference.greedy.len() {
            let tok = agentworld_engine::sampling::argmax(&rows(last)?[0]);
            greedy.push(tok);
            last = model.forward_last(&TokenBatch::single(vec![tok]), Some(&mut cache))?;
        }
        Ok(Found {
            max_dlogit,
            greedy,
            dtype: crate::progress::describe(options),
        })
    }
}

fn rows<B: burn::tensor::backend::Backend>(t: Tensor<B, 2>) -> Result<Vec<Vec<f32>>> {
    let [r, c] = t.dims();
    let v = t
        .into_data()
        .convert::<f32>()
        .to_vec::<f32>()
        .map_err(|e| anyhow::anyhow!("reading logits back: {e:?}"))?;
    Ok((0..r).map(|i| v[i * c..(i + 1) * c].to_vec()).collect())
}

/// Runs the comparison and prints one `parity ...` line; an error when it fails.
pub fn run(args: Args) -> Result<()> {
    let reference = Reference::read(&args.reference)?;
    if reference.prompt.is_empty() || reference.prefill.is_empty() {
        bail!("{}: an empty prompt", args.reference.display());
    }
    let found = dispatch(
        args.backend,
        Job {
            args: &args,
            reference: &reference,
        },
    )?;
    let same = found
        .greedy
        .iter()
        .zip(&reference.greedy)
        .take_while(|(a, b)| a == b)
        .count();
    println!(
        "parity model={} backend={} dtype={} max_dlogit={:.3e} tolerance={:.1e} greedy_match={same}/{}",
        args.model.display(),
        format!("{:?}", args.backend).to_lowercase(),
        found.dtype.replace(' ', "_"),
        found.max_dlogit,
        args.tolerance,
        reference.greedy.len()
    );
    if found.max_dlogit > args.tolerance {
        bail!(
            "prefill logits differ by {:.3e}, more than --tolerance {:.1e}",
            found.max_dlogit,
            args.tolerance
        );
    }
    if args.greedy && same < reference.greedy.len() {
        bail!(
            "greedy tokens leave the reference's after {same} of {}",
            reference.greedy.len()
        );
    }
    Ok(())
}
