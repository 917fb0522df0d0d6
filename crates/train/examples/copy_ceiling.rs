//! How far copying alone, with no model, goes on a model's held-out rows
//! ([`agentworld_train::probe::copy_ceiling`]), beside the model's own teacher-forced accuracy
//! on the same tokens when a model is given.
//!
//! ```sh
//! cargo run --release -p agentworld-train --example copy_ceiling -- [MODEL_DIR] [ROWS_PER_DOMAIN]
//! ```
//!
//! MODEL_DIR (default `public/models/agentworld-demo`) must hold `heldout.jsonl` and
//! `tokenizer.json`, as the demo recipe's model folder and work folder do; with a
//! `model.safetensors` there the model is scored too. Rows: the first 16 of each domain, as
//! the training probe takes them.

use std::path::PathBuf;

use agentworld_engine::Engine;
use agentworld_text::{ChatTemplate, Tokenizer};
use agentworld_train::dataset::build_examples;
use agentworld_train::probe::{
    CEILING_ORDERS, LONGEST_MATCH_CAPS, TokenScore, context_needed, copied_positions, copy_ceiling,
    teacher_forced_tokens,
};
use agentworld_train::recipe::pick_eval_rows;
use agentworld_world::row::read_jsonl_file;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "public/models/agentworld-demo".into()),
    );
    let per_domain: usize = match args.next() {
        Some(s) => s
            .parse()
            .map_err(|e| anyhow::anyhow!("ROWS_PER_DOMAIN {s:?}: {e}"))?,
        None => 16,
    };
    let rows = read_jsonl_file(dir.join("heldout.jsonl"))?;
    let tokenizer = Tokenizer::from_bytes(&std::fs::read(dir.join("tokenizer.json"))?)?;
    let examples = build_examples(
        &pick_eval_rows(&rows, per_domain),
        &tokenizer,
        &ChatTemplate::agentworld(),
        None,
    )?;
    let engine = if dir.join("model.safetensors").is_file() {
        let device = Default::default();
        Some(Engine::<burn::backend::Flex>::load_dir(
            &dir,
            &device,
            &mut |_, _| {},
        )?)
    } else {
        None
    };
    // As the training probe: rows longer than the model's context are left out.
    let examples: Vec<_> = match &engine {
        Some(e) => examples
            .into_iter()
            .filter(|x| x.ids.len() <= e.config.max_position_embeddings)
            .collect(),
        None => examples,
    };
    let scores = engine
        .as_ref()
        .map(|e| teacher_forced_tokens(&e.model, &examples, 4096))
        .transpose()?;
    let model = scores.as_ref().map(|s| aggregate(&examples, s));
    let columns: Vec<String> = CEILING_ORDERS
        .iter()
        .map(|n| format!("{n}-gram"))
        .chain(LONGEST_MATCH_CAPS.iter().map(|n| format!("longest ≤{n}")))
        .collect();
    println!(
        "| domain | copied tokens | {} | model |",
        columns.join(" | ")
    );
    println!("|---|---|{}---|", "---|".repeat(columns.len()));
    for c in copy_ceiling(&examples) {
        let share = |n: usize| format!("{:.3}", n as f64 / c.copied.max(1) as f64);
        let rules: Vec<String> = c
            .ngram_correct
            .iter()
            .chain(&c.longest_correct)
            .map(|&n| share(n))
            .collect();
        let mine = model
            .as_ref()
            .and_then(|m| m.iter().find(|a| a.0 == c.domain))
            .map_or("-".to_string(), |a| {
                format!("{:.3}", a.2 as f64 / a.1.max(1) as f64)
            });
        println!(
            "| {} | {} | {} | {mine} |",
            c.domain,
            c.copied,
            rules.join(" | ")
        );
    }
    if let Some(engine) = &engine {
        breakdown(
            &examples,
            &teacher_forced_tokens(&engine.model, &examples, 4096)?,
        );
    }
    Ok(())
}

/// The model's copied-token accuracy per domain: (domain, copied tokens, right).
fn aggregate(
    examples: &[agentworld_train::dataset::Example],
    scores: &[Vec<TokenScore>],
) -> Vec<(String, usize, usize)> {
    let mut by: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (e, s) in examples.iter().zip(scores) {
        let entry = by.entry(e.domain.clone()).or_default();
        for (copied, score) in copied_positions(e).into_iter().zip(s) {
            entry.0 += usize::from(copied);
            entry.1 += usize::from(copied && score.right);
        }
    }
    by.into_iter().map(|(d, (n, r))| (d, n, r)).collect()
}

/// The model's accuracy on copied tokens by the context the longest-match rule needs to place
/// them.
fn breakdown(examples: &[agentworld_train::dataset::Example], scores: &[Vec<TokenScore>]) {
    const BUCKETS: [(usize, usize, &str); 4] =
        [(1, 1, "1"), (2, 3, "2-3"), (4, 7, "4-7"), (8, 16, "8-16")];
    let mut table: std::collections::BTreeMap<String, Vec<(usize, usize)>> = Default::default();
    for (e, s) in examples.iter().zip(scores) {
        let row = table
            .entry(e.domain.clone())
            .or_insert_with(|| vec![(0, 0); BUCKETS.len() + 1]);
        let copied = copied_positions(e);
        for ((need, score), copied) in context_needed(e, 16).into_iter().zip(s).zip(copied) {
            if !copied {
                continue;
            }
            let slot = need
                .and_then(|n| BUCKETS.iter().position(|b| (b.0..=b.1).contains(&n)))
                .unwrap_or(BUCKETS.len());
            row[slot].0 += 1;
            row[slot].1 += usize::from(score.right);
        }
    }
    println!();
    println!(
        "Model accuracy on copied tokens, by the context the longest match needs to place them (tokens in brackets):"
    );
    println!();
    let heads: Vec<String> = BUCKETS
        .iter()
        .map(|b| b.2.to_string())
        .chain(["not placed within 16".to_string()])
        .collect();
    println!("| domain | {} |", heads.join(" | "));
    println!("|---|{}", "---|".repeat(heads.len()));
    for (domain, row) in table {
        let cells: Vec<String> = row
            .iter()
            .map(|&(n, right)| format!("{:.3} ({n})", right as f64 / n.max(1) as f64))
            .collect();
        println!("| {domain} | {} |", cells.join(" | "));
    }
}
