//! `agentworld eval infer`: the benchmark's infer step. Each row's messages (as `eval.py`
//! builds them) go to an OpenAI-compatible server or a local model; the raw output is stored as
//! `generation` and the observation extracted by the benchmark's output parser as
//! `prediction`.
//!
//! Extraction is `agentworld_text::observation::extract_observation` ([`inference_of`]); the
//! world crate, which holds the rest of the pipeline, takes the extracted text from its caller,
//! so it happens in this command.

use std::path::PathBuf;

use agentworld_world::Message;
use agentworld_world::bench::{Inference, generation, infer_messages, inference_error};
use agentworld_world::diff::ObservationForm;
use anyhow::{Context, Result, bail};

use super::local::LocalInfer;
use super::pool::{self, HttpArgs};
use super::rows::{self, Output, inference_of};
use crate::backend::{BackendKind, dispatch};
use crate::progress;

/// Arguments of `agentworld eval infer`.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
agentworld eval infer --data AgentWorldBench/ --out results/predictions.jsonl --endpoint http://127.0.0.1:8000 --concurrency 32\n  \
agentworld eval infer --data rows.jsonl --out predictions.jsonl --model public/models/agentworld-demo --max-tokens 700")]
pub struct InferArgs {
    /// AgentWorldBench rows: a JSONL file, or a directory of `*_test.jsonl` files.
    #[arg(long)]
    data: PathBuf,
    /// Where the rows go, with `generation` and `prediction` added. Rows already there are kept
    /// and not asked again (failed ones are), so an interrupted run resumes.
    #[arg(long)]
    out: PathBuf,
    /// Run a local model directory (Hugging Face layout) instead of calling `--endpoint`.
    #[arg(long)]
    model: Option<PathBuf>,
    /// With `--model`: rows generated together.
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// With `--model`: random seed (row r of a batch uses seed + r).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// With `--model`: where it runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: crate::backend::Precision,
    /// Only the first N rows.
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    http: HttpArgs,
}

/// Runs `eval infer`.
pub fn run(args: InferArgs) -> Result<()> {
    let inputs = rows::read_inputs(&args.data, args.limit)?;
    rows::check_unique(&inputs)?;
    let messages: Vec<Vec<Message>> = inputs
        .iter()
        .map(|r| infer_messages(&r.row).with_context(|| r.origin.clone()))
        .collect::<Result<_>>()?;
    match (&args.http.endpoint, &args.model) {
        (Some(_), Some(_)) => bail!("pass --endpoint or --model, not both"),
        (None, None) => bail!(
            "pass --endpoint URL (an OpenAI-compatible server) or --model DIR (a local model)"
        ),
        _ => {}
    }
    let mut out = Output::open(&args.out, &inputs, |_, old| {
        generation(old).is_some() && inference_error(old).is_none()
    })?;
    let pending: Vec<usize> = (0..inputs.len()).filter(|&i| !out.is_done(i)).collect();
    eprintln!(
        "infer: {} rows, {} already in {}, {} to run",
        inputs.len(),
        out.done_count(),
        args.out.display(),
        pending.len()
    );
    // A local model that writes patches: the prediction is the patch applied to the row's
    // current state, the full state the benchmark scores.
    let card = match &args.model {
        Some(dir) if args.http.endpoint.is_none() => crate::model_dir::model_card(dir)?,
        _ => None,
    };
    let bar = progress::bar(pending.len() as u64, "inferring");
    let mut failed = 0usize;
    let mut record = |i: usize, mut inference: Inference| -> Result<()> {
        if let Some(e) = &inference.error {
            failed += 1;
            bar.suspend(|| eprintln!("warning: {}: {e}", inputs[i].origin));
        }
        let domain = inputs[i].row.domain().ok();
        let form = card.as_ref().map_or(ObservationForm::Full, |c| {
            c.observation_form_for(domain.map(|d| d.as_str()))
        });
        if form == ObservationForm::Patch && inference.error.is_none() {
            inference.prediction =
                form.full_state(&inputs[i].row.current_state(), &inference.prediction);
        }
        let mut row = inputs[i].row.clone();
        agentworld_world::bench::set_inference(&mut row, &inference);
        bar.inc(1);
        out.push(i, row)
    };
    match (&args.http.endpoint, &args.model) {
        (Some(url), _) => {
            let model = args.http.resolve_model(url)?;
            eprintln!(
                "infer: {model} at {url}, {} at a time",
                args.http.concurrency
            );
            let http = &args.http;
            pool::run(
                pending.len(),
                http.concurrency,
                |j| {
                    let i = pending[j];
                    let value = serde_json::to_value(&messages[i]).unwrap_or_default();
                    match http.chat_with_retries(url, &model, &value) {
                        Ok(reply) => inference_of(reply.content, reply.reasoning),
                        Err(e) => Inference {
                            error: Some(e.message),
                            ..Default::default()
                        },
                    }
                },
                |j, inference| record(pending[j], inference),
            )?;
        }
        (None, dir) => {
            let dir = dir.clone().unwrap_or_default();
            let job = LocalInfer {
                dir,
                precision: args.precision,
                messages: &messages,
                pending: &pending,
                batch: args.batch,
                max_tokens: args.http.max_tokens,
                temperature: args.http.temperature,
                seed: args.seed,
                record: &mut record,
            };
            dispatch(args.backend, job)?;
        }
    }
    bar.finish_and_clear();
    out.finish()?;
    eprintln!(
        "infer: wrote {} ({} rows, {} failed)",
        args.out.display(),
        inputs.len(),
        failed
    );
    if failed > 0 {
        bail!("{failed} rows failed; run the same command again to retry them");
    }
    Ok(())
}
