//! `agentworld train demo`: the whole demo-model recipe in one command.

use std::path::PathBuf;

use agentworld_train::recipe::{
    BuildEvent, BuildOptions, BuildSummary, CopyStage, DemoRecipe, DemoSources, build_demo,
};
use agentworld_train::trainer::LengthRamp;
use anyhow::{Context, Result, bail};

use crate::backend::{BackendKind, OnBackend, dispatch};
use crate::{paths, progress};

/// Arguments of `agentworld train`.
#[derive(clap::Args)]
pub struct Args {
    /// Recipe to run (only `demo` for now).
    recipe: String,
    /// Where to write the model directory.
    #[arg(long)]
    out: PathBuf,
    /// Where to write the generated data, tokenizer, checkpoints and predictions.
    /// Default: `<out>.work`.
    #[arg(long)]
    work: Option<PathBuf>,
    /// Folder of real public states (`android/`, `web/browsergym/`, `os/`) the data starts
    /// from. Default: ../shared/cases (or $AGENTWORLD_CASES_DIR).
    #[arg(long)]
    cases: Option<PathBuf>,
    /// Continue a stopped run from its newest checkpoint in `<work>/checkpoints`, with the data
    /// and tokenizer it wrote. Give the same options as the first run.
    #[arg(long)]
    resume: bool,
    /// Stop after this many training steps (a checkpoint is saved there); continue later with
    /// --resume.
    #[arg(long)]
    stop_after_steps: Option<usize>,
    /// Start from the weights of an earlier run's checkpoint (`<work>/checkpoints`, or one
    /// `step-NNNNNN` folder in it) or of a model folder it exported (e.g.
    /// public/models/agentworld-demo), with a fresh optimizer and this run's schedule: to train
    /// a finished model further. The tokenizer must be that run's: the same data options make
    /// it again, or copy that run's train.jsonl, heldout.jsonl and tokenizer.json into the new
    /// work directory and pass --resume (the data is then read back: options that make data do
    /// not apply; edit train.jsonl to change it).
    #[arg(long)]
    init_from: Option<PathBuf>,
    /// Optimizer steps (default: the recipe's).
    #[arg(long)]
    steps: Option<usize>,
    /// Seed of data, weights and batch order (default: the recipe's).
    #[arg(long)]
    seed: Option<u64>,
    /// The copy curriculum: stages of copy examples alone before the world-model rows join,
    /// as `STEPS:MIN-MAX:VOCAB` separated by commas (VOCAB 0: every token; `states`: windows
    /// of real training states instead of random tokens), e.g. `200:4-24:32,100:8-64:256`;
    /// `none` for no stages. Default: the recipe's.
    #[arg(long, value_delimiter = ',', value_parser = parse_stage)]
    copy_stages: Option<Vec<CopyStage>>,
    /// One copy stage of this many steps with --copy-span and --copy-vocab, in place of the
    /// recipe's stages.
    #[arg(long, conflicts_with = "copy_stages")]
    copy_warmup_steps: Option<usize>,
    /// Shortest and longest copied span of the copy examples, in tokens: `MIN,MAX`.
    #[arg(long, value_parser = parse_span)]
    copy_span: Option<(usize, usize)>,
    /// Copied spans draw from this many of the most frequent tokens (0: all).
    #[arg(long)]
    copy_vocab: Option<usize>,
    /// Share of copy-example tokens beside the world-model tokens (default: the recipe's).
    #[arg(long)]
    copy_fraction: Option<f64>,
    /// Model shape as a JSON object of `config.json` fields, merged over the recipe's (e.g.
    /// `{"hidden_size": 192}`); `vocab_size` comes from the tokenizer.
    #[arg(long)]
    model_json: Option<String>,
    /// Initial scale of the attention q/k norms, which caps the attention logits at
    /// `sqrt(head_dim) * scale^2` (default: the recipe's).
    #[arg(long)]
    qk_norm_scale: Option<f64>,
    /// Share of the Web, Android and OS training rows whose content words are renamed to
    /// made-up ones, so that only copying predicts them (default: the recipe's).
    #[arg(long)]
    rename_share: Option<f64>,
    /// Share of the Android training rows cut from made-up screens instead of the 4 real
    /// dumps, so that remembering screens does not predict them (default: the recipe's, 0.5).
    /// Applies when the data is made, not when --resume reads it back.
    #[arg(long)]
    android_synthetic_share: Option<f64>,
    /// Share of the Web training rows on made-up sites instead of the real pages and the
    /// built-in site (default: the recipe's, 0.5). Applies when the data is made.
    #[arg(long)]
    web_synthetic_share: Option<f64>,
    /// Share of the OS training rows on made-up desktops instead of the mini desktop and the
    /// real trees (default: the recipe's, 0.5). Applies when the data is made.
    #[arg(long)]
    os_synthetic_share: Option<f64>,
    /// Share of the Web and OS training rows (of those not on made-up states) that are
    /// drills: one edit on a short made-up form or window, so a batch holds many edits
    /// (default: the recipe's, 0). Applies when the data is made.
    #[arg(long)]
    drill_share: Option<f64>,
    /// A length ramp at the start of the world-model phase, `STEPS:TOKENS`: for STEPS steps
    /// batches hold only examples up to a limit that grows from TOKENS to the longest
    /// (`none`: no ramp; default: the recipe's).
    #[arg(long)]
    length_ramp: Option<String>,
    /// Every this many steps, print teacher-forced accuracy on held-out rows (0: never;
    /// default: the recipe's).
    #[arg(long)]
    probe_every: Option<usize>,
    /// Held-out rows per domain the probe also generates from (greedy, as the final
    /// evaluation), printing well-formed share and node F1 as training goes (0: none;
    /// default: the recipe's, 8).
    #[arg(long)]
    probe_generated_rows: Option<usize>,
    /// Share of completion tokens replaced in the model's input (never in the targets) by
    /// another token of the completion, so the model learns to keep its place in a copy after
    /// a wrong token (default: the recipe's, 0.1).
    #[arg(long)]
    input_noise: Option<f64>,
    /// Loss weight of the completion tokens the prompt does not hold (the edits of a state),
    /// relative to the copied ones (default: the recipe's, 1: the plain mean; 3 was tried:
    /// docs/demo-model-research-log.md, fix (h)).
    #[arg(long)]
    edit_weight: Option<f64>,
    /// Whether the thinking of Web and OS training rows with a local edit ends with the
    /// edited lines as they become, so that the observation copies its edit from the
    /// reasoning (`--restate-edits true`; default: the recipe's). Applies when the data is
    /// made, not when --resume reads it back.
    #[arg(long)]
    restate_edits: Option<bool>,
    /// Domains whose reasoning opens with the line of the element the action names, written
    /// by the engine at decoding and into the training rows' thinking (`web,os`; default:
    /// the recipe's, none). The data part applies when the data is made, not when --resume
    /// reads it back; the card's part always.
    #[arg(long, value_delimiter = ',')]
    target_in_thinking: Option<Vec<String>>,
    /// Domains whose prompts mark the lines the action names with `^` at their start, in
    /// training and (through the card) at decoding, so the model reads which line changes
    /// where it copies it (`web,os,android`; default: the recipe's, none). Applies to the
    /// data as it is tokenized, so also with --resume.
    #[arg(long, value_delimiter = ',')]
    mark_named_lines: Option<Vec<String>>,
    /// Domains whose targets are patches, only the lines that change, which the world layer
    /// applies to the current state wherever the model's output is read (`web,os,android`;
    /// default: the recipe's, none: whole states). Applies to the data as it is tokenized,
    /// so also with --resume.
    #[arg(long, value_delimiter = ',')]
    patch_observations: Option<Vec<String>>,
    /// The copy prior the model is decoded with (a logit bonus, in nats, for the token that
    /// continues the span of the prompt being copied): written into the model card and used by
    /// the probe and the final evaluation, in every domain (default: the recipe's: 15 nats, 4
    /// on Android screens).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::values::copy_bias)]
    copy_bias: Option<f32>,
    /// Peak learning rate (default: the recipe's).
    #[arg(long)]
    lr: Option<f64>,
    /// Rows generated per domain (default: the recipe's).
    #[arg(long)]
    rows: Option<usize>,
    /// Held-out rows evaluated per domain at the end (default: the recipe's).
    #[arg(long)]
    eval_rows: Option<usize>,
    /// Tokens per optimizer step, padding included (default: the recipe's). A GPU fits far
    /// larger batches than the CPU recipe's; raise --lr with it.
    #[arg(long)]
    tokens_per_batch: Option<usize>,
    /// Where to train: the CPU (burn-flex), or a GPU backend compiled in with
    /// `--features wgpu` / `--features cuda`. The data, tokenizer and batch order are the same
    /// on each; the initial weights come from the backend's own random generator.
    #[arg(long, value_enum, default_value = "cpu")]
    backend: BackendKind,
    /// Precision of the end-of-run evaluation of the exported model (`--dtype`, `--quantize`;
    /// default f32, the training precision). Training itself always runs in f32.
    #[command(flatten)]
    eval_precision: crate::backend::Precision,
}

/// The recipe, run on the backend chosen at run time.
struct Build<'a> {
    recipe: &'a DemoRecipe,
    sources: &'a DemoSources,
    work: &'a std::path::Path,
    out: &'a std::path::Path,
    options: &'a BuildOptions,
    events: &'a mut dyn FnMut(BuildEvent),
}

impl OnBackend for Build<'_> {
    type Output = BuildSummary;
    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<BuildSummary> {
        Ok(build_demo::<B>(
            &device,
            self.recipe,
            self.sources,
            self.work,
            self.out,
            self.options,
            self.events,
        )?)
    }
}

/// One `STEPS:MIN-MAX:VOCAB` copy stage; `none` is a stage of no steps (left out).
fn parse_stage(part: &str) -> std::result::Result<CopyStage, String> {
    if part.trim() == "none" {
        return Ok(CopyStage {
            steps: 0,
            span: (1, 1),
            vocab: 0,
            from_states: false,
        });
    }
    let fields: Vec<&str> = part.trim().split(':').collect();
    let [steps, span, vocab] = fields[..] else {
        return Err(format!(
            "`{part}`: give STEPS:MIN-MAX:VOCAB, e.g. 200:4-24:32"
        ));
    };
    let number = |v: &str, what: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{part}`: `{v}` is not a {what}"))
    };
    let from_states = vocab.trim() == "states";
    Ok(CopyStage {
        steps: number(steps, "step count")?,
        span: parse_span(&span.replace('-', ","))?,
        vocab: if from_states {
            0
        } else {
            number(vocab, "token count")?
        },
        from_states,
    })
}

fn parse_ramp(text: &str) -> std::result::Result<Option<LengthRamp>, String> {
    if text.trim() == "none" {
        return Ok(None);
    }
    let (steps, tokens) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}`: give STEPS:TOKENS, e.g. 600:200"))?;
    let parse = |v: &str, what: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{text}`: `{v}` is not a {what}"))
    };
    Ok(Some(LengthRamp {
        steps: parse(steps, "step count")?,
        start_tokens: parse(tokens, "token count")?,
    }))
}

fn parse_span(text: &str) -> std::result::Result<(usize, usize), String> {
    let (a, b) = text
        .split_once(',')
        .ok_or_else(|| format!("`{text}`: give MIN,MAX, e.g. 4,32"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{v}` is not a token count"))
    };
    let (a, b) = (parse(a)?, parse(b)?);
    if a == 0 || a > b {
        return Err(format!("`{text}`: need 1 <= MIN <= MAX"));
    }
    Ok((a, b))
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (the same index in v2 and v3).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

pub fn run(args: Args) -> Result<()> {
    if args.recipe != "demo" {
        bail!("unknown recipe `{}`; available: demo", args.recipe);
    }
    // Every training step allocates and frees the same large activations; by default mimalloc
    // hands freed pages back to the kernel after 10 ms, and faulting them in again (the kernel
    // zeroing huge pages) took 16% of a step. Keeping them: 12% faster steps, 20% more peak
    // RSS (measured on the demo recipe, 40 steps, two cores).
    // SAFETY: sets a process-wide allocator option; mimalloc allows it at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    let mut recipe = DemoRecipe::default();
    if let Some(s) = args.steps {
        if s == 0 {
            bail!("--steps must be at least 1");
        }
        recipe.train.steps = s;
        recipe.train.warmup_steps = recipe.train.warmup_steps.min(s / 10 + 1);
    }
    if let Some(text) = &args.model_json {
        let patch: serde_json::Value =
            serde_json::from_str(text).context("--model-json is not a JSON object")?;
        let Some(fields) = patch.as_object() else {
            bail!(
                "--model-json must be a JSON object of config.json fields, e.g. '{{\"hidden_size\": 192}}'"
            );
        };
        for (k, v) in fields {
            recipe.model[k] = v.clone();
        }
    }
    if let Some(scale) = args.qk_norm_scale {
        if !(scale.is_finite() && scale > 0.0) {
            bail!("--qk-norm-scale must be a positive number, got {scale}");
        }
        recipe.qk_norm_scale = scale;
    }
    if let Some(bias) = args.copy_bias {
        recipe.copy_bias = bias;
        recipe.copy_bias_by_domain.clear();
    }
    if let Some(share) = args.rename_share {
        if !(0.0..=1.0).contains(&share) {
            bail!("--rename-share must be between 0 and 1, got {share}");
        }
        recipe.rename_share = share;
    }
    for (flag, share, field) in [
        (
            "--android-synthetic-share",
            args.android_synthetic_share,
            &mut recipe.android_synthetic_share,
        ),
        (
            "--web-synthetic-share",
            args.web_synthetic_share,
            &mut recipe.web_synthetic_share,
        ),
        (
            "--os-synthetic-share",
            args.os_synthetic_share,
            &mut recipe.os_synthetic_share,
        ),
        ("--drill-share", args.drill_share, &mut recipe.drill_share),
    ] {
        if let Some(share) = share {
            if !(0.0..=1.0).contains(&share) {
                bail!("{flag} must be between 0 and 1, got {share}");
            }
            *field = share;
        }
    }
    if let Some(ramp) = &args.length_ramp {
        recipe.train.length_ramp =
            parse_ramp(ramp).map_err(|e| anyhow::anyhow!("--length-ramp {e}"))?;
    }
    if let Some(share) = args.input_noise {
        if !(0.0..1.0).contains(&share) {
            bail!("--input-noise must be at least 0 and below 1, got {share}");
        }
        recipe.train.input_noise = share;
    }
    if let Some(weight) = args.edit_weight {
        if !(weight.is_finite() && weight > 0.0) {
            bail!("--edit-weight must be a positive number (1: the plain mean), got {weight}");
        }
        recipe.train.edit_weight = weight;
    }
    if let Some(on) = args.restate_edits {
        recipe.restate_edits = on;
    }
    if let Some(domains) = args.target_in_thinking.clone() {
        let domains: Vec<String> = domains.into_iter().filter(|d| !d.is_empty()).collect();
        // Checked here so a bad domain is refused before the data is made.
        agentworld_train::recipe::grounded_formats(&domains)
            .map_err(|e| anyhow::anyhow!("--target-in-thinking: {e}"))?;
        recipe.target_in_thinking = domains;
    }
    if let Some(domains) = args.mark_named_lines.clone() {
        recipe.mark_named_lines = domains.into_iter().filter(|d| !d.is_empty()).collect();
        agentworld_train::recipe::reading_card(&recipe)
            .map_err(|e| anyhow::anyhow!("--mark-named-lines: {e}"))?;
    }
    if let Some(domains) = args.patch_observations.clone() {
        recipe.patch_observations = domains.into_iter().filter(|d| !d.is_empty()).collect();
        agentworld_train::recipe::reading_card(&recipe)
            .map_err(|e| anyhow::anyhow!("--patch-observations: {e}"))?;
    }
    if let Some(n) = args.probe_generated_rows {
        recipe.probe_generated_rows_per_domain = n;
    }
    if let Some(n) = args.probe_every {
        recipe.probe_every = n;
    }
    if let Some(lr) = args.lr {
        if !(lr.is_finite() && lr > 0.0) {
            bail!("--lr must be a positive number, got {lr}");
        }
        recipe.train.learning_rate = lr;
    }
    if let Some(span) = args.copy_span {
        recipe.copy_span = span;
    }
    if let Some(k) = args.copy_vocab {
        recipe.copy_vocab = k;
    }
    if let Some(f) = args.copy_fraction {
        recipe.copy_fraction = f;
    }
    if let Some(stages) = args.copy_stages {
        recipe.copy_stages = stages.into_iter().filter(|s| s.steps > 0).collect();
    }
    if let Some(steps) = args.copy_warmup_steps {
        recipe.copy_stages = vec![CopyStage {
            steps,
            span: recipe.copy_span,
            vocab: recipe.copy_vocab,
            from_states: false,
        }];
    }
    if let Some(s) = args.seed {
        recipe.seed = s;
        recipe.train.seed = s;
    }
    if let Some(n) = args.rows {
        recipe.terminal_rows = n;
        recipe.android_rows = n;
        recipe.web_rows = n;
        recipe.os_rows = n;
    }
    if let Some(n) = args.eval_rows {
        recipe.eval_rows_per_domain = n;
    }
    if let Some(n) = args.tokens_per_batch {
        if n == 0 {
            bail!("--tokens-per-batch must be at least 1");
        }
        recipe.train.tokens_per_batch = n;
    }
    if let Some(n) = args.stop_after_steps
        && !(1..recipe.train.steps).contains(&n)
    {
        bail!(
            "--stop-after-steps {n} is not between 1 and the run's {} steps; leave it out to train to the end",
            recipe.train.steps
        );
    }
    if let Some(at) = &args.init_from
        && !(at.join("model.bin").is_file()
            || at.join("latest").is_file()
            || agentworld_train::checkpoint::is_model_dir(at))
    {
        bail!(
            "--init-from {}: no checkpoint there (neither model.bin nor latest, nor config.json \
             with safetensors); give an earlier run's <work>/checkpoints, one step-NNNNNN folder \
             in it, or a model folder it exported",
            at.display()
        );
    }
    let work = args.work.unwrap_or_else(|| args.out.with_extension("work"));
    let cases = args.cases.unwrap_or_else(paths::default_cases);
    let options = BuildOptions {
        resume: args.resume,
        stop_after_steps: args.stop_after_steps,
        init_from: args.init_from,
        eval_weights: args.eval_precision.fixed(),
    };
    let mut bar: Option<indicatif::ProgressBar> = None;
    let sources = DemoSources::from_cases(&cases);
    let mut on_event = |event: BuildEvent| match event {
        BuildEvent::Phase(p) => {
            if let Some(b) = bar.take() {
                b.finish();
            }
            eprintln!("== {p}");
        }
        BuildEvent::Note(n) => match &bar {
            Some(b) => b.suspend(|| eprintln!("   {n}")),
            None => eprintln!("   {n}"),
        },
        BuildEvent::Step(s, total) => {
            let b = bar.get_or_insert_with(|| progress::bar(total as u64, "training"));
            b.set_position(s.step as u64 + 1);
            b.set_message(format!("loss {:.3} lr {:.1e}", s.loss, s.learning_rate));
            if s.step % 25 == 0 || s.step + 1 == total {
                let line = format!(
                    "step {:>5}  loss {:.4}  lr {:.2e}  {:>5} tok  {:>7.1}s",
                    s.step, s.loss, s.learning_rate, s.tokens, s.elapsed_secs
                );
                b.suspend(|| eprintln!("{line}"));
            }
        }
        BuildEvent::Eval(done, total) => {
            let b = bar.get_or_insert_with(|| progress::bar(total as u64, "evaluating"));
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let summary = dispatch(
        args.backend,
        Build {
            recipe: &recipe,
            sources: &sources,
            work: &work,
            out: &args.out,
            options: &options,
            events: &mut on_event,
        },
    )?;
    if let Some(b) = bar.take() {
        b.finish();
    }
    if !summary.finished {
        eprintln!(
            "stopped after {:.0}s of training; continue with the same command and --resume",
            summary.train_secs
        );
        return Ok(());
    }
    eprintln!(
        "model written to {} (training took {:.0}s)",
        summary.model_dir.display(),
        summary.train_secs
    );
    crate::cmd::eval::print_table(&summary.evaluation);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_stages_parse_or_say_what_is_wrong() {
        let s = parse_stage("200:4-24:32").unwrap();
        assert_eq!((s.steps, s.span, s.vocab), (200, (4, 24), 32));
        assert_eq!(parse_stage("none").unwrap().steps, 0);
        assert!(
            parse_stage("200:4-24")
                .unwrap_err()
                .contains("STEPS:MIN-MAX:VOCAB")
        );
        assert!(parse_stage("x:4-24:32").unwrap_err().contains("step count"));
        assert!(
            parse_stage("10:24-4:32")
                .unwrap_err()
                .contains("MIN <= MAX")
        );
    }
}
