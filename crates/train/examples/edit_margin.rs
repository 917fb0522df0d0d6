//! Where the copy prior and the model disagree, teacher-forced: at each observation token of
//! held-out rows, the token the copy prior would favour (its continuation, run along the true
//! completion) beside the model's own log-probabilities.
//!
//! ```sh
//! cargo run --release -p agentworld-train --example edit_margin -- [MODEL_DIR] [FIRST] [ROWS]
//! ```
//!
//! Rows FIRST..FIRST+ROWS of each domain of MODEL_DIR's `heldout.jsonl` (default 100..150: not
//! the rows `eval fidelity` reports). Per domain, it counts *copy points* (the truth is the
//! continuation) and *edit points* (there is a continuation and the truth differs), and for
//! decision rules of the form "the model's top token wins when it beats the continuation by
//! more than B nats and has probability at least P" how many copy points each rule breaks and
//! how many edits it writes, and in how many rows it makes no mistake at all.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agentworld_engine::Engine;
use agentworld_engine::sampling::CopyPrior;
use agentworld_model::TokenBatch;
use agentworld_text::{ChatTemplate, Tokenizer};
use agentworld_train::dataset::build_examples;
use agentworld_train::eval::rows_of_each_domain;
use agentworld_world::row::read_jsonl_file;
use burn::tensor::activation::log_softmax;

type B = burn::backend::Flex;

struct Point {
    /// The continuation is the truth.
    copy: bool,
    /// log p(top) - log p(continuation).
    margin: f32,
    /// p(top).
    p_top: f32,
    /// The model's top token is the truth.
    top_right: bool,
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "public/models/agentworld-demo".into()),
    );
    let mut number = |name: &str, default: usize| -> anyhow::Result<usize> {
        args.next().map_or(Ok(default), |s| {
            s.parse()
                .map_err(|e| anyhow::anyhow!("{name} {s:?} is not a row count: {e}"))
        })
    };
    let first = number("FIRST", 100)?;
    let count = number("ROWS", 50)?;
    let rows = rows_of_each_domain(
        read_jsonl_file(dir.join("heldout.jsonl"))?,
        first..first + count,
    );
    let tokenizer = Tokenizer::from_bytes(&std::fs::read(dir.join("tokenizer.json"))?)?;
    let device = Default::default();
    let engine = Engine::<B>::load_dir(&dir, &device, &mut |_, _| {})?;
    // The prompts as this model reads them (its card's line markers, if any).
    let examples = build_examples(
        &rows,
        &tokenizer,
        &ChatTemplate::agentworld(),
        engine.card.as_ref(),
    )?;
    let id = |s: &str| {
        tokenizer
            .token_to_id(s)
            .ok_or_else(|| anyhow::anyhow!("no token {s}"))
    };
    let (think_close, obs_close, im_end) = (
        id("</think>")?,
        id("</predicted_observation>")?,
        id("<|im_end|>")?,
    );
    let mut by_domain: BTreeMap<String, Vec<Vec<Point>>> = BTreeMap::new();
    for e in &examples {
        if e.ids.len() > engine.config.max_position_embeddings {
            continue;
        }
        let n = e.ids.len() - 1;
        let hidden = engine.model.forward_hidden(
            &TokenBatch {
                ids: vec![e.ids[..n].to_vec()],
                valid: None,
            },
            None,
        )?;
        let [_, len, h] = hidden.dims();
        let start = e.completion_start - 1;
        let at = hidden.slice([0..1, start..len, 0..h]);
        let lp = log_softmax(engine.model.logits(at), 2);
        let vocab = lp.dims()[2];
        let lp: Vec<f32> = lp.into_data().convert::<f32>().to_vec()?;
        let mut prior = CopyPrior::new(&e.ids[..e.completion_start], &engine.stop_ids)
            .closed_by(&[obs_close, im_end])
            .after(think_close);
        let mut points = Vec::new();
        for (k, t) in (start..n).enumerate() {
            let truth = e.ids[t + 1];
            let row = &lp[k * vocab..(k + 1) * vocab];
            if let Some(c) = prior.continuation() {
                let top = agentworld_engine::sampling::argmax(row);
                points.push(Point {
                    copy: c == truth,
                    margin: row[top as usize] - row[c as usize],
                    p_top: row[top as usize].exp(),
                    top_right: top == truth,
                });
            }
            prior.push(truth);
        }
        by_domain.entry(e.domain.clone()).or_default().push(points);
    }
    let rules: Vec<(f32, f32)> = [0.0f32, 2.0, 4.0, 6.0, 8.0, 10.0, 15.0]
        .iter()
        .flat_map(|&b| [0.0f32, 0.5, 0.8, 0.9, 0.95, 0.99].map(|p| (b, p)))
        .collect();
    for (domain, rows) in &by_domain {
        let copies = rows.iter().flatten().filter(|p| p.copy).count();
        let edits = rows.iter().flatten().filter(|p| !p.copy).count();
        let edits_top = rows
            .iter()
            .flatten()
            .filter(|p| !p.copy && p.top_right)
            .count();
        println!(
            "{domain}: {} rows, {copies} copy points, {edits} edit points ({edits_top} with the model's top right)",
            rows.len()
        );
        println!("| B nats | P | copies broken | edits written | rows clean |");
        for &(b, pmin) in &rules {
            let wins = |p: &Point| p.margin > b && p.p_top >= pmin;
            let broken = rows.iter().flatten().filter(|p| p.copy && wins(p)).count();
            let written = rows
                .iter()
                .flatten()
                .filter(|p| !p.copy && wins(p) && p.top_right)
                .count();
            let clean = rows
                .iter()
                .filter(|r| {
                    r.iter().all(|p| {
                        if p.copy {
                            !wins(p)
                        } else {
                            wins(p) && p.top_right
                        }
                    })
                })
                .count();
            println!("| {b} | {pmin} | {broken} | {written} | {clean} |");
        }
    }
    Ok(())
}
