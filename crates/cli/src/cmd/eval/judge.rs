//! `agentworld eval judge`: the benchmark's judge step. Each row's prediction is scored by an
//! LLM judge on five dimensions; the scores are stored under the benchmark's field names, so
//! `eval score` (or `eval.py score`) reads the result.

use std::path::PathBuf;

use agentworld_text::observation::extract_observation;
use agentworld_world::bench::{
    JudgeOutcome, generation, judge_messages, judge_system_prompt, prediction,
};
use agentworld_world::{PromptSet, Row};
use anyhow::{Context, Result};
use serde_json::Value;

use super::pool::{self, HttpArgs};
use super::rows::{self, Output};
use super::score::{print_report, report_of_rows};
use crate::progress;

/// Arguments of `agentworld eval judge`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  \
agentworld eval judge --data results/predictions.jsonl --out results/judged.jsonl --endpoint https://api.openai.com/v1 --model-name gpt-5.2-2025-12-11")]
pub struct JudgeArgs {
    /// Rows with generations: the output of `eval infer` (or `eval.py infer`'s predictions.jsonl).
    #[arg(long)]
    data: PathBuf,
    /// Where the judged rows go. Rows already judged there are kept and not judged again
    /// (failed judgements of a generation are), so an interrupted run resumes.
    #[arg(long)]
    out: PathBuf,
    /// A checkout of Qwen-AgentWorld's prompts/ folder: its `<domain>/judge_system_prompt.txt`
    /// replaces our judge prompt for that domain.
    #[arg(long)]
    prompts_dir: Option<PathBuf>,
    /// Only the first N rows.
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    http: HttpArgs,
}

/// What one row needs for its judge call; `None` messages: no generation, no call.
struct Prepared {
    prediction: String,
    messages: Option<Value>,
}

fn prepare(row: &Row, prompts: &PromptSet) -> Result<Prepared> {
    let domain = row.domain()?;
    let generated = generation(row).unwrap_or("");
    let prediction = match prediction(row) {
        Some(p) => p.to_string(),
        None => extract_observation(generated),
    };
    // Built for every row so that a malformed one is reported before any call.
    let messages = judge_messages(row, &prediction, judge_system_prompt(prompts, domain))?;
    Ok(Prepared {
        messages: (!generated.is_empty())
            .then(|| serde_json::to_value(&messages))
            .transpose()?,
        prediction,
    })
}

/// Whether an earlier judgement in `--out` stands: same generation, and either scored or
/// failed for want of a generation.
fn already_judged(input: &Row, old: &Row) -> bool {
    let generated = generation(input).unwrap_or("");
    generation(old).unwrap_or("") == generated
        && (old.extra.get("failed").and_then(Value::as_f64) == Some(0.0) || generated.is_empty())
}

/// Runs `eval judge`.
pub fn run(args: JudgeArgs) -> Result<()> {
    let inputs = rows::read_inputs(&args.data, args.limit)?;
    rows::check_unique(&inputs)?;
    let prompts = match &args.prompts_dir {
        Some(dir) => PromptSet::from_dir(dir)?,
        None => PromptSet::builtin(),
    };
    let prepared: Vec<Prepared> = inputs
        .iter()
        .map(|r| prepare(&r.row, &prompts).with_context(|| r.origin.clone()))
        .collect::<Result<_>>()?;
    let Some(url) = args.http.endpoint.as_deref() else {
        anyhow::bail!("pass --endpoint URL: the judge's OpenAI-compatible server");
    };
    let mut out = Output::open(&args.out, &inputs, already_judged)?;
    let pending: Vec<usize> = (0..inputs.len()).filter(|&i| !out.is_done(i)).collect();
    let model = args.http.resolve_model(url)?;
    eprintln!(
        "judge: {} rows, {} already in {}, {} to judge with {model} at {url}",
        inputs.len(),
        out.done_count(),
        args.out.display(),
        pending.len()
    );
    let bar = progress::bar(pending.len() as u64, "judging");
    let http = &args.http;
    let mut failed = 0usize;
    pool::run(
        pending.len(),
        http.concurrency,
        |j| match &prepared[pending[j]].messages {
            None => JudgeOutcome::no_generation(),
            Some(messages) => JudgeOutcome::with_retries(http.attempts, |attempt| {
                std::thread::sleep(http.backoff(attempt));
                http.chat_once(url, &model, messages)
                    .map(|reply| reply.content)
                    .map_err(|e| e.message)
            }),
        },
        |j, outcome| {
            let i = pending[j];
            if let JudgeOutcome::Failed { message, .. } = &outcome {
                failed += 1;
                bar.suspend(|| eprintln!("note: {}: {message}", inputs[i].origin));
            }
            let mut row = inputs[i].row.clone();
            outcome.write_into(&mut row, Some(&prepared[i].prediction));
            bar.inc(1);
            out.push(i, row)
        },
    )?;
    bar.finish_and_clear();
    let report = report_of_rows(out.rows())?;
    out.finish()?;
    eprintln!(
        "judge: wrote {} ({} rows; {failed} judged now failed and are left out of the scores)",
        args.out.display(),
        inputs.len()
    );
    print_report(&report);
    Ok(())
}
