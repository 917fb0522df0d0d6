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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentworld_engine::Engine;
use agentworld_model::{InitOptions, Qwen35Moe, Qwen35MoeConfig};
use agentworld_text::{ChatTemplate, Tokenizer};
use agentworld_world::Row;
use agentworld_world::data::{RenameConfig, rename_content};
use agentworld_world::row::{read_jsonl_file, write_jsonl_file};
use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use serde::{Deserialize, Serialize};

use crate::checkpoint::Checkpointing;
use crate::dataset::{
    Example, build_examples, copy_examples, frequent_tokens, state_copy_examples,
};
use crate::error::{Result, TrainError};
use crate::eval::{DomainSummary, evaluate, summarise};
use crate::tokenizer::{ADDED_TOKENS, SPECIAL_TOKENS, train_tokenizer};
use crate::trainer::{CurriculumStage, Probe, StepInfo, TrainConfig, train_probed};

mod data;
mod export;
mod look;
mod warm;
pub use data::{
    ANDROID_PROMPT, DemoSources, OS_PROMPT, PROMPTS, TERMINAL_PROMPT, WEB_PROMPT, make_data,
};
use export::export_dir;
pub use export::record_evaluation;
use warm::{same_tokenizer, source_tokenizer};

/// The model card's description.
pub const DESCRIPTION: &str = "A toy Qwen3.5-MoE world model trained by agentworld from scratch on real terminal transitions (real bash in sandboxes) and on exactly computed GUI transitions: Android edits on real UI dumps, Web page edits and navigation (BrowserGym accessibility trees of real and built-in pages), and desktop actions (OSWorld accessibility tables of real AT-SPI trees and a mini desktop). It shows the whole loop running on a laptop; it is not a substitute for Qwen-AgentWorld.";

/// One stage of [`DemoRecipe::copy_stages`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyStage {
    /// Optimizer steps on this stage's copy examples alone.
    pub steps: usize,
    /// Shortest and longest copied span, in tokens.
    pub span: (usize, usize),
    /// Spans draw from this many of the most frequent completion tokens (0: every learned
    /// token).
    pub vocab: usize,
    /// Spans are windows of real training states ([`crate::dataset::state_copy_examples`])
    /// instead of random tokens (`vocab` is then unused).
    #[serde(default)]
    pub from_states: bool,
}

impl CopyStage {
    /// The [`Example::domain`] of stage `index`'s examples.
    pub fn domain(index: usize) -> String {
        format!("copy-stage-{}", index + 1)
    }
}

/// Every setting of the demo build.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DemoRecipe {
    /// Seed of data, initialisation and batch order.
    pub seed: u64,
    /// Terminal rows to generate (train and held-out together).
    pub terminal_rows: usize,
    /// Android rows to generate.
    pub android_rows: usize,
    /// Share of the Android training rows cut from made-up screens
    /// ([`agentworld_world::data::android::screen`]) instead of the dumps (0: none; half
    /// by default, so that remembering the 4 dumps predicts half the rows at most).
    #[serde(default)]
    pub android_synthetic_share: f64,
    /// Web rows to generate.
    pub web_rows: usize,
    /// Share of the Web training rows on made-up sites
    /// ([`agentworld_world::data::web::made`]) instead of real pages and built-in families
    /// (0: none; half by default).
    #[serde(default)]
    pub web_synthetic_share: f64,
    /// OS (desktop) rows to generate.
    pub os_rows: usize,
    /// Share of the OS training rows on made-up desktops
    /// ([`agentworld_world::data::os::build::made_up`]) instead of the mini desktop and real
    /// trees (0: none; half by default).
    #[serde(default)]
    pub os_synthetic_share: f64,
    /// Tokenizer size, added tokens included.
    pub vocab_size: usize,
    /// Examples longer than this many tokens are left out of training.
    pub max_example_tokens: usize,
    /// Auxiliary copy examples of random tokens ([`crate::dataset::copy_examples`]) mixed
    /// with the world-model rows, as a share of their tokens (0 by default: their loss stayed
    /// at chance, ln of the vocabulary, through whole runs).
    pub copy_fraction: f64,
    /// Shortest and longest copied span, in tokens.
    pub copy_span: (usize, usize),
    /// Copied spans draw from this many of the most frequent completion tokens (0: every
    /// learned token).
    #[serde(default)]
    pub copy_vocab: usize,
    /// The copy curriculum: stages of copy examples alone before the world-model rows join,
    /// each with its own span and token set (e.g. short spans of the 32 most frequent tokens
    /// until the induction circuit forms, then the token set doubling each stage, a superset
    /// of the last, so the circuit is kept while new tokens join), or windows of real
    /// training states growing from 8–32 to 64–256 tokens (the default: 500 steps). Random
    /// tokens: jumping from 32 to 256 tokens at once put the copy loss back at chance;
    /// doubling kept it below chance up to 512 tokens, but left the world-model rows less
    /// often well-formed (README, "The demo model").
    #[serde(default)]
    pub copy_stages: Vec<CopyStage>,
    /// Model shape (`config.json` fields).
    pub model: serde_json::Value,
    /// Share of the Web, Android and OS training rows whose content words are renamed to
    /// made-up ones ([`agentworld_world::data::rename`]), so that only copying from the context
    /// predicts them (0: none).
    #[serde(default)]
    pub rename_share: f64,
    /// Initial scale of the attention layers' q/k norms ([`InitOptions::qk_norm_scale`]).
    #[serde(default = "one")]
    pub qk_norm_scale: f64,
    /// Optimisation.
    pub train: TrainConfig,
    /// The copy prior the model is decoded with ([`SamplingParams::copy_bias`], 0: plain
    /// greedy): written into the card, and used by the probe and the final evaluation. 15
    /// nats by default, with none for terminal screens ([`Self::copy_bias_by_domain`]): the
    /// values that scored best on held-out rows 150–165 of each domain (README, "The copy
    /// prior").
    ///
    /// [`SamplingParams::copy_bias`]: agentworld_model::sampling::SamplingParams::copy_bias
    #[serde(default)]
    pub copy_bias: f32,
    /// Per domain, a copy prior in place of [`Self::copy_bias`] ([`Self::copy_bias_for`]).
    #[serde(default)]
    pub copy_bias_by_domain: BTreeMap<String, f32>,
    /// Held-out rows evaluated per domain.
    pub eval_rows_per_domain: usize,
    /// Rows generated together during evaluation.
    pub eval_batch: usize,
    /// Generation limit during evaluation.
    pub eval_max_tokens: usize,
    /// Save a training checkpoint every this many steps (0: only at the end).
    pub checkpoint_every: usize,
    /// Every this many steps, teacher-forced accuracy on held-out rows
    /// ([`crate::probe::teacher_forced`]) is printed and appended to `<work>/probe.jsonl`
    /// (0: never).
    #[serde(default)]
    pub probe_every: usize,
    /// Held-out rows per domain the probe scores.
    #[serde(default)]
    pub probe_rows_per_domain: usize,
    /// Held-out rows per domain the probe also generates from, greedily as the final
    /// evaluation does, to score well-formed outputs and node F1 while training (0: none).
    /// Teacher-forced accuracy cannot see a generated copy that loops or never closes.
    #[serde(default)]
    pub probe_generated_rows_per_domain: usize,
}

impl Default for DemoRecipe {
    fn default() -> Self {
        Self {
            seed: 7,
            terminal_rows: 2500,
            android_rows: 2500,
            android_synthetic_share: 0.5,
            web_synthetic_share: 0.5,
            os_synthetic_share: 0.5,
            web_rows: 2500,
            os_rows: 2500,
            vocab_size: 4096,
            max_example_tokens: 1400,
            copy_fraction: 0.0,
            copy_span: (16, 320),
            copy_vocab: 0,
            copy_stages: [
                (200, (8, 32)),
                (100, (16, 64)),
                (100, (32, 128)),
                (100, (64, 256)),
            ]
            .into_iter()
            .map(|(steps, span)| CopyStage {
                steps,
                span,
                vocab: 0,
                from_states: true,
            })
            .collect(),
            rename_share: 0.4,
            qk_norm_scale: 1.0,
            model: serde_json::json!({
                "hidden_size": 128, "num_hidden_layers": 4,
                "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                "linear_key_head_dim": 32, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
                "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
                "shared_expert_intermediate_size": 128, "max_position_embeddings": 2048,
                "rms_norm_eps": 1e-6, "tie_word_embeddings": false,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}
            }),
            train: TrainConfig {
                steps: 2400,
                learning_rate: 2e-3,
                warmup_steps: 60,
                tokens_per_batch: 2560,
                seed: 7,
                input_noise: 0.1,
                ..Default::default()
            },
            copy_bias: 15.0,
            copy_bias_by_domain: BTreeMap::from([("terminal".to_string(), 0.0)]),
            eval_rows_per_domain: 100,
            eval_batch: 16,
            eval_max_tokens: 700,
            checkpoint_every: 100,
            probe_every: 250,
            probe_rows_per_domain: 16,
            probe_generated_rows_per_domain: 8,
        }
    }
}

impl DemoRecipe {
    /// The copy prior `domain` is decoded with: its entry in [`Self::copy_bias_by_domain`],
    /// else [`Self::copy_bias`].
    pub fn copy_bias_for(&self, domain: &str) -> f32 {
        self.copy_bias_by_domain
            .get(domain)
            .copied()
            .unwrap_or(self.copy_bias)
    }
}

fn one() -> f64 {
    1.0
}

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
        let (mut train_rows, test_rows) = make_data(recipe, sources)?;
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
    let mut examples: Vec<Example> = build_examples(&train_rows, &tokenizer, &template)?;
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
    let engine = Engine::<B>::load_dir(out_dir, device, &mut |_, _| {})?;
    let held = pick_eval_rows(&test_rows, recipe.eval_rows_per_domain);
    let predictions = evaluate(
        &engine,
        &held,
        recipe.eval_batch,
        recipe.eval_max_tokens,
        &|d| recipe.copy_bias_for(d),
        &mut |d, t| events(BuildEvent::Eval(d, t)),
    )?;
    write_jsonl_lines(&work_dir.join("predictions.jsonl"), &predictions)?;
    let evaluation = summarise(&predictions);
    record_evaluation(
        out_dir,
        recipe.eval_rows_per_domain,
        recipe.eval_max_tokens,
        &|d| recipe.copy_bias_for(d),
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
