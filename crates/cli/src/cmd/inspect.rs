//! `agentworld inspect`: what a checkpoint holds, without loading its weights.

use std::path::PathBuf;

use agentworld_model::loader::{self, ExpertLayout, LayoutReport};
use agentworld_model::memory::MemoryPlan;
use agentworld_model::{LayerType, LoadOptions, Qwen35MoeConfig};
use anyhow::{Context, Result};

use crate::paths;

/// Arguments of `agentworld inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// Model directory (Hugging Face layout). Default: the demo model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// The precision the memory plan assumes (`--dtype`, default the checkpoint's
    /// `torch_dtype`; `--quantize int8`).
    #[command(flatten)]
    precision: crate::backend::Precision,
    /// Tokens per sequence the cache is planned for (default: the model's context).
    #[arg(long)]
    max_model_len: Option<usize>,
    /// Sequences cached at once.
    #[arg(long, default_value_t = 1)]
    max_batch: usize,
}

/// The memory plan of `config` with weights held as `options`, `max_batch` caches of
/// `max_model_len` tokens (default: the model's context).
pub(crate) fn plan(
    config: &Qwen35MoeConfig,
    options: LoadOptions,
    max_model_len: Option<usize>,
    max_batch: usize,
) -> MemoryPlan {
    MemoryPlan::new(
        config,
        options,
        max_model_len.unwrap_or(config.max_position_embeddings),
        max_batch,
    )
}

fn human(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.2}B", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.2}M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1}K", n as f64 / 1e3),
        n => n.to_string(),
    }
}

pub fn run(args: Args) -> Result<()> {
    let dir = args.model.unwrap_or_else(paths::default_model);
    let config_path = dir.join("config.json");
    let text = std::fs::read_to_string(&config_path).with_context(|| {
        format!(
            "reading {}: inspect needs a model directory with config.json",
            config_path.display()
        )
    })?;
    let config = Qwen35MoeConfig::from_json_str(&text, &config_path.display().to_string())?;
    // A folder with config.json alone is planned without weights (the 35B and 397B shapes on a
    // laptop); one with weights is also described tensor by tensor.
    let has_weights = std::fs::read_dir(&dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().ends_with(".safetensors"));
    let report = if has_weights {
        let (_, checkpoint) =
            loader::open_dir(&dir).with_context(|| format!("opening {}", dir.display()))?;
        Some(LayoutReport::describe(&checkpoint)?)
    } else {
        None
    };
    let options = LoadOptions {
        dtype: args
            .precision
            .dtype
            .or_else(|| crate::backend::stored_dtype(&dir))
            .unwrap_or_default(),
        ..args.precision.fixed()
    };
    if args.max_batch == 0 {
        anyhow::bail!("--max-batch must be at least 1");
    }
    let memory = plan(&config, options, args.max_model_len, args.max_batch);
    let counts = config.param_counts();
    let kinds = config.layer_types();
    let attention = kinds
        .iter()
        .filter(|k| **k == LayerType::FullAttention)
        .count();
    if args.json {
        let v = serde_json::json!({
            "model": dir.display().to_string(),
            "config": config,
            "parameters": {"total": counts.total, "active_per_token": counts.active, "routed_experts": counts.routed_experts},
            "layers": {"total": kinds.len(), "full_attention": attention, "gated_deltanet": kinds.len() - attention},
            "layout": report.as_ref().map(|report| serde_json::json!({
                "prefix": report.prefix, "experts": format!("{:?}", report.experts), "shards": report.shards,
                "dtypes": report.dtypes, "data_bytes": report.data_bytes, "skipped": report.skipped,
                "warnings": report.warnings,
            })),
            "memory": {
                "dtype": memory.line().split_whitespace().nth(1).and_then(|d| d.strip_prefix("dtype=")),
                "weights_gib": memory.weights / agentworld_model::memory::GIB,
                "cache_per_seq_gib": memory.cache_per_seq / agentworld_model::memory::GIB,
                "total_gib": memory.total() / agentworld_model::memory::GIB,
                "max_model_len": memory.max_model_len, "max_batch": memory.max_batch,
            },
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("model        {}", dir.display());
    println!(
        "shape        hidden_size {}, {} layers ({} Gated DeltaNet + {} full attention), vocab {}",
        config.hidden_size,
        kinds.len(),
        kinds.len() - attention,
        attention,
        config.vocab_size
    );
    let pattern: String = kinds
        .iter()
        .map(|k| {
            if *k == LayerType::FullAttention {
                'A'
            } else {
                'D'
            }
        })
        .collect();
    println!("layers       {pattern}   (D = Gated DeltaNet, A = gated full attention)");
    println!(
        "attention    {} heads x {} (kv heads {}), RoPE on {} dims, theta {}",
        config.num_attention_heads,
        config.head_dim,
        config.num_key_value_heads,
        config.rotary_dim(),
        config.rope_parameters.rope_theta
    );
    println!(
        "deltanet     {} key heads x {}, {} value heads x {}, conv kernel {}",
        config.linear_num_key_heads,
        config.linear_key_head_dim,
        config.linear_num_value_heads,
        config.linear_value_head_dim,
        config.linear_conv_kernel_dim
    );
    println!(
        "moe          {} experts, top-{}, expert width {}, shared expert width {}",
        config.num_experts,
        config.num_experts_per_tok,
        config.moe_intermediate_size,
        config.shared_expert_intermediate_size
    );
    println!(
        "parameters   {} total, {} active per token",
        human(counts.total),
        human(counts.active)
    );
    println!("context      {} tokens", config.max_position_embeddings);
    println!(
        "plan         {} weights, cache of {} x {} tokens (KV in f32, DeltaNet state)",
        crate::progress::describe(options),
        memory.max_batch,
        memory.max_model_len
    );
    let Some(report) = report else {
        println!("tensors      none here (config.json only): the plan is from the shapes");
        println!("{}", memory.line());
        return Ok(());
    };
    println!(
        "tensors      prefix `{}`, experts {}, {} shard(s), {}",
        report.prefix,
        match report.experts {
            ExpertLayout::Fused => "fused (gate_up_proj/down_proj)",
            ExpertLayout::PerExpert => "per expert",
        },
        report.shards.len(),
        human(report.data_bytes) + "B"
    );
    let dtypes: Vec<String> = report
        .dtypes
        .iter()
        .map(|(d, n)| format!("{n} {d}"))
        .collect();
    println!("dtypes       {}", dtypes.join(", "));
    for (group, n) in &report.skipped {
        println!("skipped      {n} tensors of {group}");
    }
    for w in &report.warnings {
        println!("warning      {w}");
    }
    println!("{}", memory.line());
    Ok(())
}
