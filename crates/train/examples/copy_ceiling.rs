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
use agentworld_train::probe::{CEILING_ORDERS, LONGEST_MATCH_CAPS, copy_ceiling, teacher_forced};
use agentworld_train::recipe::pick_eval_rows;
use agentworld_world::row::read_jsonl_file;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "public/models/agentworld-demo".into()),
    );
    let per_domain: usize = match args.next() {
        Some(s) => s.parse()?,
        None => 16,
    };
    let rows = read_jsonl_file(dir.join("heldout.jsonl"))?;
    let tokenizer = Tokenizer::from_bytes(&std::fs::read(dir.join("tokenizer.json"))?)?;
    let examples = build_examples(
        &pick_eval_rows(&rows, per_domain),
        &tokenizer,
        &ChatTemplate::agentworld(),
    )?;
    let model = if dir.join("model.safetensors").is_file() {
        let device = Default::default();
        let engine = Engine::<burn::backend::Flex>::load_dir(&dir, &device, &mut |_, _| {})?;
        Some(teacher_forced(&engine.model, &examples, 4096)?)
    } else {
        None
    };
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
            .and_then(|m| m.iter().find(|a| a.domain == c.domain))
            .map_or("-".to_string(), |a| format!("{:.3}", a.copy_accuracy()));
        println!(
            "| {} | {} | {} | {mine} |",
            c.domain,
            c.copied,
            rules.join(" | ")
        );
    }
    Ok(())
}
