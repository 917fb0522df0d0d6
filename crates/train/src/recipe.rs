//! The demo model recipe: from nothing to a model directory, in one call.
//!
//! 1. Data: terminal transitions from real bash in throwaway sandboxes, Android local edits on
//!    real UI dumps, Web page transitions (real HTML pages and a built-in site) and desktop
//!    transitions (real AT-SPI trees and a mini desktop), all computed exactly by the world
//!    crate's generators, with held-out rows whose command templates, dumps, pages, desktops
//!    and words never appear in training; plus auxiliary copy examples.
//! 2. Tokenizer: our own byte-level BPE trained on the training rows.
//! 3. Model: Qwen3.5-MoE at toy size (hybrid Gated DeltaNet / gated attention, sparse MoE with
//!    a shared expert), trained from scratch with burn autodiff on the CPU.
//! 4. Export: a Hugging Face directory (bf16 safetensors) plus `agentworld.json`, the system
//!    prompts the model was trained with, the held-out rows and the loss curve.
//! 5. Evaluation of the exported model on held-out rows, written into the card.

use std::path::{Path, PathBuf};

use agentworld_data::{RenameConfig, ground_thinking, rename_content, restate_edits};
use agentworld_engine::Engine;
use agentworld_model::{InitOptions, Qwen35Moe, Qwen35MoeConfig};
use agentworld_text::{ChatTemplate, Tokenizer};
use agentworld_world::diff::ObservationForm;
use agentworld_world::row::{read_jsonl_file, write_jsonl_file};
use agentworld_world::{Domain, Row};
use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use serde::Serialize;

use crate::checkpoint::Checkpointing;
use crate::dataset::{
    Example, build_examples, copy_examples, frequent_tokens, state_copy_examples,
};
use crate::error::{Result, TrainError};
use crate::eval::{DomainSummary, evaluate, summarise};
use crate::tokenizer::{ADDED_TOKENS, SPECIAL_TOKENS, train_tokenizer};
use crate::trainer::{CurriculumStage, Probe, StepInfo, train_probed};

mod config;
mod data;
mod export;
mod look;
mod warm;
pub use config::{CopyStage, DemoRecipe, LINE_MARKER};
pub use data::{
    ANDROID_PROMPT, DemoSources, OS_PROMPT, PROMPTS, TERMINAL_PROMPT, WEB_PROMPT, make_data,
};
use export::export_dir;
pub use export::record_evaluation;
use warm::{same_tokenizer, source_tokenizer};

/// The model card's description.
pub const DESCRIPTION: &str = "A toy Qwen3.5-MoE world model trained by agentworld from scratch on real terminal transitions (real bash in sandboxes) and on exactly computed GUI transitions: Android edits on real UI dumps, Web page edits and navigation (BrowserGym accessibility trees of real and built-in pages), and desktop actions (OSWorld accessibility tables of real AT-SPI trees and a mini desktop). It shows the whole loop running on a laptop; it is not a substitute for Qwen-AgentWorld.";

/// Progress of a build, for display.
#[derive(Debug, Clone)]
pub enum BuildEvent {
    /// A phase started.
    Phase(&'static str),
    /// Something worth a line of output.
    Note(String),
    /// A training step finished (out of `total`).
    Step(StepInfo, usize),
    /// Evaluation progress.
    Eval(usize, usize),
}

/// What a build produced.
#[derive(Debug, Clone, Serialize)]
pub struct BuildSummary {
    /// The model directory.
    pub model_dir: PathBuf,
    /// Training rows used, per domain.
    pub train_rows: Vec<(String, usize)>,
    /// Held-out figures.
    pub evaluation: Vec<DomainSummary>,
    /// Wall-clock seconds of training.
    pub train_secs: f64,
    /// Whether training ran to the last step (else it stopped at `stop_after_steps`).
    pub finished: bool,
}

/// How a build runs, beside the recipe (these do not change the result).
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Continue from the newest checkpoint in `<work>/checkpoints`, reusing the data and
    /// tokenizer written in `<work>` by the stopped run.
    pub resume: bool,
    /// Stop after this many training steps (a checkpoint is saved there).
    pub stop_after_steps: Option<usize>,
    /// Start from the weights of an earlier run's checkpoint instead of fresh ones
    /// ([`crate::checkpoint::warm_start`]): the run must use that run's tokenizer (resume with
    /// its `train.jsonl`, `heldout.jsonl` and `tokenizer.json` copied into the work
    /// directory), and trains with its own schedule.
    pub init_from: Option<PathBuf>,
    /// Precision the end-of-run evaluation loads the exported model in (`agentworld train
    /// --dtype`; default f32, the precision it was trained in).
    pub eval_weights: agentworld_model::LoadOptions,
}

/// The domains and state formats of a recipe's `target_in_thinking`.
///
/// # Errors
/// A domain that is not a GUI domain of the demo data.
pub fn grounded_formats(domains: &[String]) -> Result<Vec<(Domain, &'static str)>> {
    gui_formats("target_in_thinking", domains)
}

/// The domains and state formats of `domains`, the recipe setting `field` (named in the
/// error).
fn gui_formats(field: &str, domains: &[String]) -> Result<Vec<(Domain, &'static str)>> {
    domains
        .iter()
        .map(|d| {
            let format = crate::eval::state_format(d);
            match (d.parse::<Domain>(), format) {
                (Ok(domain), Some(format)) => Ok((domain, format)),
                _ => Err(TrainError::Data(format!(
                    "{field}: {d:?} is not one of android, web, os"
                ))),
            }
        })
        .collect()
}

/// The card part of a recipe that changes what the model reads and writes
/// ([`DemoRecipe::mark_named_lines`]: each such domain's state format and [`LINE_MARKER`];
/// [`DemoRecipe::patch_observations`]: `patch` as the domain's observation form), for
/// [`build_examples`] and the probe; `None` when neither is set.
///
/// # Errors
/// [`TrainError::Data`] for a domain that is not one of android, web, os.
pub fn reading_card(recipe: &DemoRecipe) -> Result<Option<agentworld_engine::ModelCard>> {
    if recipe.mark_named_lines.is_empty() && recipe.patch_observations.is_empty() {
        return Ok(None);
    }
    let marked = gui_formats("mark_named_lines", &recipe.mark_named_lines)?;
    let patched = gui_formats("patch_observations", &recipe.patch_observations)?;
    Ok(Some(agentworld_engine::ModelCard {
        state_formats: marked
            .iter()
            .chain(&patched)
            .map(|(d, f)| (d.as_str().to_string(), f.to_string()))
            .collect(),
        line_marker_by_domain: marked
            .iter()
            .map(|(d, _)| (d.as_str().to_string(), LINE_MARKER.to_string()))
            .collect(),
        observation_form_by_domain: patched
            .iter()
            .map(|(d, _)| (d.as_str().to_string(), ObservationForm::Patch))
            .collect(),
        ..Default::default()
    }))
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| TrainError::io(path, e))
}

/// Runs the whole recipe. `sources` names the real states the data starts from
/// (`../shared/cases`); `work_dir` receives the data files, the tokenizer and the training
/// checkpoints; `out_dir` the model. With `options.resume` and a stopped run's files in
/// `work_dir`, the data and tokenizer are read back instead of made again, and training
/// continues from the newest checkpoint.
///
/// The model trains on `Autodiff<B>` on `device` (burn-flex on the CPU, or wgpu/CUDA where the
/// caller compiled them in); the held-out probe and the final evaluation run on `B` there too.
/// The data, tokenizer and batch order do not depend on the backend; the initial weights come
/// from the backend's own random generator, so runs on two backends start (and end) apart.
///
/// # Errors
/// Any failure of a phase, named.
pub fn build_demo<B: Backend>(
    device: &B::Device,
    recipe: &DemoRecipe,
    sources: &DemoSources,
    work_dir: &Path,
    out_dir: &Path,
    options: &BuildOptions,
    events: &mut dyn FnMut(BuildEvent),
) -> Result<BuildSummary> {
    std::fs::create_dir_all(work_dir).map_err(|e| TrainError::io(work_dir, e))?;
    // The warm start's tokenizer is read before anything here is written.
    let init_tokenizer = match &options.init_from {
        Some(at) => Some(source_tokenizer(at, work_dir)?),
        None => None,
    };
    let files = ["train.jsonl", "heldout.jsonl", "tokenizer.json"].map(|f| work_dir.join(f));
    let reuse = options.resume && files.iter().all(|f| f.exists());
    events(BuildEvent::Phase("data"));
    let (train_rows, test_rows) = if reuse {
        let read = |p: &Path| read_jsonl_file(p).map_err(TrainError::from);
        (read(&files[0])?, read(&files[1])?)
    } else {
        let (mut train_rows, mut test_rows) = make_data(recipe, sources)?;
        if recipe.rename_share > 0.0 {
            let renamed = rename_content(
                &mut train_rows,
                &RenameConfig {
                    share: recipe.rename_share,
                    seed: recipe.seed,
                    ..Default::default()
                },
            );
            events(BuildEvent::Note(format!(
                "content words renamed in {renamed} Web, Android and OS training rows"
            )));
        }
        if recipe.restate_edits {
            let restated = restate_edits(&mut train_rows);
            events(BuildEvent::Note(format!(
                "edited lines restated in the thinking of {restated} Web and OS training rows"
            )));
        }
        if !recipe.target_in_thinking.is_empty() {
            let formats = grounded_formats(&recipe.target_in_thinking)?;
            let grounded = ground_thinking(&mut train_rows, &formats)
                + ground_thinking(&mut test_rows, &formats);
            events(BuildEvent::Note(format!(
                "the thinking of {grounded} rows opens with the element the action names"
            )));
        }
        write_jsonl_file(&files[0], &train_rows)?;
        write_jsonl_file(&files[1], &test_rows)?;
        (train_rows, test_rows)
    };
    events(BuildEvent::Note(format!(
        "{} training rows, {} held-out rows in {}{}",
        train_rows.len(),
        test_rows.len(),
        work_dir.display(),
        if reuse {
            " (read back to resume: the options that make data do not apply)"
        } else {
            ""
        }
    )));

    events(BuildEvent::Phase("tokenizer"));
    let template = ChatTemplate::agentworld();
    let tokenizer_json = if reuse {
        std::fs::read_to_string(&files[2]).map_err(|e| TrainError::io(&files[2], e))?
    } else {
        let corpus: Vec<String> = train_rows
            .iter()
            .map(|r| {
                Ok(crate::dataset::prompt_text(r, &template)?
                    + &crate::dataset::completion_text(r)?)
            })
            .collect::<Result<_>>()?;
        let json = train_tokenizer(corpus.iter().map(String::as_str), recipe.vocab_size)?;
        write(&files[2], &json)?;
        json
    };
    let tokenizer = Tokenizer::from_bytes(tokenizer_json.as_bytes())?;
    let pad_id = tokenizer.require_token_id("<|endoftext|>")?;
    let reading = reading_card(recipe)?;
    let mut examples: Vec<Example> =
        build_examples(&train_rows, &tokenizer, &template, reading.as_ref())?;
    let before = examples.len();
    examples.retain(|e| e.ids.len() <= recipe.max_example_tokens);
    let tokens: usize = examples.iter().map(|e| e.ids.len()).sum();
    events(BuildEvent::Note(format!(
        "vocabulary {}; {} examples ({} longer than {} tokens left out), {} tokens, mean {:.0}",
        tokenizer.vocab_size(),
        examples.len(),
        before - examples.len(),
        recipe.max_example_tokens,
        tokens,
        tokens as f64 / examples.len().max(1) as f64
    )));
    let learned = (tokenizer.vocab_size() - SPECIAL_TOKENS.len() - ADDED_TOKENS.len()) as u32;
    let separator = tokenizer.require_token_id("<predicted_observation>")?;
    // Learned tokens by frequency in the completions, ranked once for every token set.
    let ranked: Vec<u32> = frequent_tokens(&examples, 0)
        .into_iter()
        .filter(|&t| t < learned)
        .collect();
    let copies_of = |tokens: usize, span: (usize, usize), vocab: usize, seed: u64| {
        let pool: Vec<u32> = if vocab == 0 {
            (0..learned).collect()
        } else {
            ranked[..vocab.min(ranked.len())].to_vec()
        };
        copy_examples(tokens, &pool, separator, span.0, span.1, seed)
    };
    let mut copies = copies_of(
        (tokens as f64 * recipe.copy_fraction) as usize,
        recipe.copy_span,
        recipe.copy_vocab,
        recipe.seed,
    );
    let mut train_config = recipe.train.clone();
    for (i, stage) in recipe.copy_stages.iter().enumerate() {
        let domain = CopyStage::domain(i);
        let seed = recipe.seed.wrapping_add(1 + i as u64);
        let total = stage.steps * recipe.train.tokens_per_batch;
        let mut staged = if stage.from_states {
            state_copy_examples(
                total,
                &examples,
                separator,
                stage.span.0,
                stage.span.1,
                seed,
            )
        } else {
            copies_of(total, stage.span, stage.vocab, seed)
        };
        for e in &mut staged {
            e.domain = domain.clone();
        }
        copies.extend(staged);
        train_config.curriculum.push(CurriculumStage {
            domain,
            steps: stage.steps,
        });
    }
    let staged_steps: usize = recipe.copy_stages.iter().map(|s| s.steps).sum();
    events(BuildEvent::Note(format!(
        "{} copy examples ({} tokens) to teach copying{}",
        copies.len(),
        copies.iter().map(|e| e.ids.len()).sum::<usize>(),
        if staged_steps > 0 {
            format!(
                "; the first {staged_steps} steps train on copying alone, in {} stages",
                recipe.copy_stages.len()
            )
        } else {
            String::new()
        }
    )));
    examples.extend(copies);

    events(BuildEvent::Phase("train"));
    let mut model_json = recipe.model.clone();
    model_json["vocab_size"] = tokenizer.vocab_size().into();
    model_json["model_type"] = "qwen3_5_moe_text".into();
    let config = Qwen35MoeConfig::from_json_str(&model_json.to_string(), "recipe")?;
    <Autodiff<B> as Backend>::seed(device, recipe.seed);
    let model = Qwen35Moe::<Autodiff<B>>::init_with(
        &config,
        device,
        InitOptions {
            qk_norm_scale: recipe.qk_norm_scale,
        },
    );
    let model = match &options.init_from {
        Some(at) => {
            match init_tokenizer.flatten() {
                Some((path, text)) => same_tokenizer(&path, &text, &tokenizer_json)?,
                None => events(BuildEvent::Note(format!(
                    "no tokenizer.json beside {}: not checked that it is this run's",
                    at.display()
                ))),
            }
            let model = crate::checkpoint::warm_start(model, at)?;
            events(BuildEvent::Note(format!(
                "weights from {} (a warm start: fresh optimizer and schedule)",
                at.display()
            )));
            model
        }
        None => model,
    };
    let total = recipe.train.steps;
    let checkpoints = Checkpointing {
        dir: work_dir.join("checkpoints"),
        every: recipe.checkpoint_every,
        resume: options.resume,
        stop_at: options.stop_after_steps,
    };
    if options.resume
        && let Some((at, state)) = checkpoints.latest()?
    {
        events(BuildEvent::Note(format!(
            "resuming from {} (step {} of {total})",
            at.display(),
            state.step
        )));
    }
    let probe_examples: Vec<Example> = build_examples(
        &pick_eval_rows(&test_rows, recipe.probe_rows_per_domain),
        &tokenizer,
        &template,
        reading.as_ref(),
    )?
    .into_iter()
    .filter(|e| e.ids.len() <= config.max_position_embeddings)
    .collect();
    let probe_log = work_dir.join("probe.jsonl");
    let events = std::cell::RefCell::new(events);
    let generated_rows = pick_eval_rows(&test_rows, recipe.probe_generated_rows_per_domain);
    let looks = look::Looks {
        teacher_forced: &probe_examples,
        generated: &generated_rows,
        config: &config,
        tokenizer: &tokenizer,
        template: &template,
        recipe,
        log: &probe_log,
    };
    let mut look = |done: usize, m: &Qwen35Moe<B>| {
        for line in looks.look(done, m, device) {
            (events.borrow_mut())(BuildEvent::Note(line));
        }
    };
    let probe = (recipe.probe_every > 0
        && !(probe_examples.is_empty() && generated_rows.is_empty()))
    .then_some(Probe {
        every: recipe.probe_every,
        run: &mut look,
    });
    let (model, history) = train_probed(
        model,
        &examples,
        &train_config,
        pad_id,
        Some(&checkpoints),
        &mut |s| (events.borrow_mut())(BuildEvent::Step(s, total)),
        probe,
    )?;
    let events = events.into_inner();
    if history.len() < total {
        events(BuildEvent::Note(format!(
            "stopped after step {} of {total}; run again with --resume to continue",
            history.len()
        )));
        return Ok(BuildSummary {
            model_dir: out_dir.to_path_buf(),
            train_rows: Vec::new(),
            evaluation: Vec::new(),
            train_secs: history.last().map_or(0.0, |s| s.elapsed_secs),
            finished: false,
        });
    }
    let train_secs = history.last().map_or(0.0, |s| s.elapsed_secs);

    events(BuildEvent::Phase("export"));
    export_dir(
        out_dir,
        &model,
        &config,
        &tokenizer_json,
        &test_rows,
        recipe,
        &history,
        options.init_from.as_deref(),
    )?;

    events(BuildEvent::Phase("eval"));
    let engine = Engine::<B>::load_dir_with(out_dir, device, options.eval_weights, &mut |_, _| {})?;
    let held = pick_eval_rows(&test_rows, recipe.eval_rows_per_domain);
    let predictions = evaluate(
        &engine,
        &held,
        recipe.eval_batch,
        recipe.eval_max_tokens,
        &|d| recipe.copy_bias_for(d),
        // The recipe sets no named-line prior: it is a card setting, tuned after training.
        &|_| None,
        &mut |d, t| events(BuildEvent::Eval(d, t)),
    )?;
    write_jsonl_lines(&work_dir.join("predictions.jsonl"), &predictions)?;
    let evaluation = summarise(&predictions);
    record_evaluation(
        out_dir,
        recipe.eval_rows_per_domain,
        recipe.eval_max_tokens,
        &|d| recipe.copy_bias_for(d),
        &|_| None,
        &evaluation,
    )?;
    let mut counts = std::collections::BTreeMap::new();
    for r in &train_rows {
        *counts.entry(r.task.clone()).or_insert(0usize) += 1;
    }
    Ok(BuildSummary {
        model_dir: out_dir.to_path_buf(),
        train_rows: counts.into_iter().collect(),
        evaluation,
        train_secs,
        finished: true,
    })
}

/// The first `per_domain` held-out rows of each domain, in file order.
pub fn pick_eval_rows(rows: &[Row], per_domain: usize) -> Vec<Row> {
    let mut seen = std::collections::BTreeMap::new();
    rows.iter()
        .filter(|r| {
            let n = seen.entry(r.task.clone()).or_insert(0usize);
            *n += 1;
            *n <= per_domain
        })
        .cloned()
        .collect()
}

fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(f, "{line}")
}

fn write_jsonl_lines<T: Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(item).expect("serialisable"));
        text.push('\n');
    }
    write(path, text)
}
