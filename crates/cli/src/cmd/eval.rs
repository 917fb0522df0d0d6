//! `agentworld eval`: held-out fidelity of a model, beside the "state unchanged" baseline; and
//! the AgentWorldBench pipeline (`infer`, `judge`, `score`), whose bodies live in `eval/`.

mod infer;
mod judge;
mod local;
pub(crate) mod pool;
mod rows;
mod score;

use std::path::PathBuf;

use agentworld_train::eval::{DomainSummary, evaluate, summarise};
use agentworld_train::recipe::pick_eval_rows;
use agentworld_world::row::read_jsonl_file;
use anyhow::{Context, Result, bail};

use crate::backend::{BackendKind, OnBackend, dispatch};
use crate::{paths, progress};

/// Arguments of `agentworld eval`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

/// What to evaluate.
#[derive(clap::Subcommand)]
enum What {
    /// Fidelity on held-out transitions with rule-based metrics, beside the "state unchanged" baseline.
    Fidelity(FidelityArgs),
    /// Which experts the router picks in each domain (teacher-forced on held-out rows): the
    /// figures behind the playground's MoE view.
    Routing(RoutingArgs),
    /// AgentWorldBench step 1: each row's world-model output, from a server or a local model.
    Infer(infer::InferArgs),
    /// AgentWorldBench step 2: an LLM judge scores each prediction on five dimensions.
    Judge(judge::JudgeArgs),
    /// AgentWorldBench step 3: per-domain scores and both overall figures from judged rows.
    Score(score::ScoreArgs),
}

/// Arguments of `agentworld eval fidelity`.
#[derive(clap::Args)]
pub struct FidelityArgs {
    /// Model directory. Default: the demo model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Held-out rows (AgentWorldBench JSONL). Default: the model's heldout.jsonl.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Rows evaluated per domain (the first ones in the file).
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = crate::values::at_least_one)]
    rows: usize,
    /// Rows generated together.
    #[arg(long, default_value_t = 16, allow_negative_numbers = true, value_parser = crate::values::at_least_one)]
    batch: usize,
    /// Generation limit per row.
    #[arg(long, default_value_t = 700, allow_negative_numbers = true, value_parser = crate::values::at_least_one)]
    max_tokens: usize,
    /// Also write every prediction as JSONL here.
    #[arg(long)]
    predictions: Option<PathBuf>,
    /// Copy prior: a logit bonus, in nats, for the token that continues the span of the prompt
    /// being copied; 0 is plain greedy decoding; applies to every domain. Default: the model
    /// card's for each domain (`copy_bias_by_domain`, else `copy_bias`), else 0.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::values::copy_bias)]
    copy_bias: Option<f32>,
    /// Copy prior (nats) on the lines of the state the action names (the element it acts on)
    /// in place of `--copy-bias` there, in every GUI domain. Default: the card's
    /// `named_copy_bias_by_domain` when `--copy-bias` is not given; a domain it does not list
    /// copies those lines as the rest.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::values::copy_bias)]
    named_copy_bias: Option<f32>,
    /// Record the figures in the model's card (`agentworld.json`), replacing earlier ones.
    #[arg(long)]
    record: bool,
    /// Where the model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: crate::backend::Precision,
}

/// Arguments of `agentworld eval routing`.
#[derive(clap::Args)]
pub struct RoutingArgs {
    /// Model directory. Default: the demo model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Rows (AgentWorldBench JSONL). Default: the model's heldout.jsonl.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Rows run per domain (the first ones in the file).
    #[arg(long, default_value_t = 20, allow_negative_numbers = true, value_parser = crate::values::at_least_one)]
    rows: usize,
    /// Write the figures as JSON here (the playground reads `routing.json` beside the model).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Where the model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: crate::backend::Precision,
}

struct RoutingJob {
    precision: crate::backend::Precision,
    model: PathBuf,
    rows: Vec<agentworld_world::Row>,
    out: Option<PathBuf>,
}

impl OnBackend for RoutingJob {
    type Output = ();
    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<()> {
        let engine = progress::load_engine::<B>(&self.model, &device, self.precision)?;
        let bar = progress::bar(self.rows.len() as u64, "routing");
        let use_ = agentworld_train::routing::expert_use(&engine, &self.rows, &mut |d| {
            bar.set_position(d as u64)
        })?;
        bar.finish_and_clear();
        print_routing(&use_);
        if let Some(path) = &self.out {
            let text = serde_json::to_string_pretty(&use_)? + "\n";
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        Ok(())
    }
}

/// Prints each domain's most used experts per layer, and how far apart the domains are.
fn print_routing(u: &agentworld_train::routing::ExpertUse) {
    println!(
        "{} experts, top-{} per token; share of each layer's choices:",
        u.num_experts, u.top_k
    );
    println!("| domain | tokens | layer | most used experts (share) |");
    println!("|---|---|---|---|");
    for d in &u.domains {
        for (layer, share) in d.share.iter().enumerate() {
            let mut order: Vec<usize> = (0..share.len()).collect();
            order.sort_by(|&a, &b| share[b].total_cmp(&share[a]));
            let top: Vec<String> = order
                .iter()
                .take(3)
                .map(|&e| format!("{e} ({:.0}%)", 100.0 * share[e]))
                .collect();
            println!(
                "| {} | {} | {layer} {} | {} |",
                d.domain,
                d.tokens,
                u.layer_types.get(layer).map_or("", String::as_str),
                top.join(", ")
            );
        }
    }
    for (i, a) in u.domains.iter().enumerate() {
        for b in &u.domains[i + 1..] {
            let per_layer: Vec<String> = (0..a.share.len())
                .filter_map(|l| u.distance(&a.domain, &b.domain, l))
                .map(|d| format!("{d:.2}"))
                .collect();
            println!(
                "routing distance={} vs {} per_layer={}",
                a.domain,
                b.domain,
                per_layer.join(",")
            );
        }
    }
}

/// Prints the per-domain table and one machine-readable line per domain.
pub fn print_table(summary: &[DomainSummary]) {
    println!(
        "| domain | rows | well-formed | exact | node F1 | baseline exact | baseline node F1 | changed lines (rows) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for d in summary {
        let unit = if d.unit == "node" { "" } else { " (lines)" };
        // No row changed its state: there is no share of changed lines to give.
        let changed = if d.changed_rows == 0 {
            "– (0)".to_string()
        } else {
            format!("{:.1}% ({})", 100.0 * d.changed_accuracy, d.changed_rows)
        };
        println!(
            "| {} | {} | {:.1}% | {:.1}% | {:.3}{unit} | {:.1}% | {:.3}{unit} | {changed} |",
            d.domain,
            d.rows,
            100.0 * d.well_formed,
            100.0 * d.exact,
            d.node_f1,
            100.0 * d.baseline_exact,
            d.baseline_node_f1,
        );
    }
    for d in summary {
        println!(
            "fidelity domain={} well_formed={:.4} exact={:.4} node_f1={:.4} baseline_node_f1={:.4} rows={} unit={} baseline_exact={:.4} changed_rows={} changed_accuracy={:.4} agreement={:.4} tokens_per_step={:.1}",
            d.domain,
            d.well_formed,
            d.exact,
            d.node_f1,
            d.baseline_node_f1,
            d.rows,
            d.unit,
            d.baseline_exact,
            d.changed_rows,
            d.changed_accuracy,
            d.agreement,
            d.tokens
        );
    }
}

struct Job {
    args: FidelityArgs,
    model: PathBuf,
    rows: Vec<agentworld_world::Row>,
}

impl OnBackend for Job {
    type Output = ();
    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<()> {
        let engine = progress::load_engine::<B>(&self.model, &device, self.args.precision)?;
        let card = engine.card.clone().unwrap_or_default();
        let flag = self.args.copy_bias;
        let copy_bias = |d: &str| flag.unwrap_or_else(|| card.copy_bias_for(Some(d)));
        let domains: std::collections::BTreeSet<&str> = self
            .rows
            .iter()
            .map(agentworld_train::eval::row_domain)
            .collect();
        let named_flag = self.args.named_copy_bias;
        // The card's prior on the named lines goes with the card's copy prior.
        let named_copy_bias = |d: &str| {
            named_flag.or_else(|| {
                flag.is_none()
                    .then(|| card.named_copy_bias_for(Some(d)))
                    .flatten()
            })
        };
        let biases: Vec<String> = domains
            .iter()
            .map(|d| match named_copy_bias(d) {
                Some(n) => format!("{d} {} ({n} on the lines the action names)", copy_bias(d)),
                None => format!("{d} {}", copy_bias(d)),
            })
            .collect();
        let gate = card
            .copy_confidence
            .map(|p| {
                format!(
                    " (the model weighed against the copy at top-token probability {p} or more)"
                )
            })
            .unwrap_or_default();
        eprintln!(
            "decoding: greedy, weights {}, copy bias {}{gate}",
            progress::describe(engine.weights),
            biases.join(", ")
        );
        let bar = progress::bar(self.rows.len() as u64, "evaluating");
        let predictions = evaluate(
            &engine,
            &self.rows,
            self.args.batch,
            self.args.max_tokens,
            &copy_bias,
            &named_copy_bias,
            &mut |d, _| bar.set_position(d as u64),
        )?;
        bar.finish_and_clear();
        if let Some(path) = &self.args.predictions {
            let mut text = String::new();
            for p in &predictions {
                text.push_str(&serde_json::to_string(p)?);
                text.push('\n');
            }
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        let summary = summarise(&predictions);
        print_table(&summary);
        if self.args.record {
            agentworld_train::recipe::record_evaluation(
                &self.model,
                self.args.rows,
                self.args.max_tokens,
                &copy_bias,
                &named_copy_bias,
                &summary,
            )?;
            eprintln!(
                "recorded in {}",
                self.model.join("agentworld.json").display()
            );
        }
        Ok(())
    }
}

pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Fidelity(a) => fidelity(a),
        What::Routing(a) => routing(a),
        What::Infer(a) => infer::run(a),
        What::Judge(a) => judge::run(a),
        What::Score(a) => score::run(a),
    }
}

/// Reads the rows to evaluate from `data`.
///
/// # Errors
/// A file that cannot be read, one with no rows, and a row whose `task` is not one of the
/// seven domains (its id and line named): scored anyway, it would land in a table row of its
/// own under rules that are not its domain's.
fn eval_rows(data: &std::path::Path) -> Result<Vec<agentworld_world::Row>> {
    let rows =
        read_jsonl_file(data).with_context(|| format!("reading rows from {}", data.display()))?;
    if rows.is_empty() {
        bail!(
            "{}: no rows to evaluate (AgentWorldBench JSONL: one row per line)",
            data.display()
        );
    }
    for (i, row) in rows.iter().enumerate() {
        if let Err(e) = row.task.parse::<agentworld_world::Domain>() {
            bail!(
                "{}: row {} (`{}`): task: {e}",
                data.display(),
                i + 1,
                row.id
            );
        }
    }
    Ok(rows)
}

fn fidelity(args: FidelityArgs) -> Result<()> {
    let model = args.model.clone().unwrap_or_else(paths::default_model);
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| model.join("heldout.jsonl"));
    let rows = eval_rows(&data)?;
    let rows = pick_eval_rows(&rows, args.rows);
    eprintln!(
        "evaluating {} rows from {} on {}",
        rows.len(),
        data.display(),
        model.display()
    );
    dispatch(args.backend, Job { args, model, rows })
}

fn routing(args: RoutingArgs) -> Result<()> {
    let model = args.model.clone().unwrap_or_else(paths::default_model);
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| model.join("heldout.jsonl"));
    let rows = eval_rows(&data)?;
    let rows = pick_eval_rows(&rows, args.rows);
    eprintln!(
        "routing {} rows from {} through {}",
        rows.len(),
        data.display(),
        model.display()
    );
    let job = RoutingJob {
        precision: args.precision,
        model,
        rows,
        out: args.out,
    };
    dispatch(args.backend, job)
}
