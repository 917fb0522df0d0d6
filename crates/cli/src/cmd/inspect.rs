//! `agentworld inspect`: what a checkpoint holds, without loading its weights.

use std::path::PathBuf;

use agentworld_model::LayerType;
use agentworld_model::loader::{self, ExpertLayout, LayoutReport};
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
    let (config, checkpoint) =
        loader::open_dir(&dir).with_context(|| format!("opening {}", dir.display()))?;
    let report = LayoutReport::describe(&checkpoint)?;
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
            "layout": {
                "prefix": report.prefix, "experts": format!("{:?}", report.experts), "shards": report.shards,
                "dtypes": report.dtypes, "data_bytes": report.data_bytes, "skipped": report.skipped,
                "warnings": report.warnings,
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
    Ok(())
}
