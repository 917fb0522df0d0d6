//! Whether a model knows which line of a Web or OS state the action names, teacher-forced:
//! at every check box value the observation writes (`checked='true'` / `'false'` in an
//! accessibility tree, `checked` / `unchecked` in an OSWorld table), the probability the
//! model gives to the value the box did not have in the current state, split by whether
//! the line changes (the box the action toggles: that value is the truth) or is copied
//! unchanged (every other box: that value is wrong).
//!
//! ```sh
//! cargo run --release -p agentworld-train --example binding -- [MODEL_DIR] [FIRST] [ROWS] [DATA]
//! ```
//!
//! Rows FIRST..FIRST+ROWS of each domain (default 100..150, the tune rows that `eval
//! fidelity`'s reported rows 0..100 leave out) of DATA (default MODEL_DIR's `heldout.jsonl`).
//! A model that binds the action to its line puts most of its probability on the flipped
//! value on toggled lines and little on the others; one that does not puts about the same on
//! both (how often a box changes at all). docs/demo-model-research-log.md, (m).

use std::collections::BTreeMap;
use std::path::PathBuf;

use agentworld_engine::Engine;
use agentworld_model::TokenBatch;
use agentworld_text::{ChatTemplate, Tokenizer};
use agentworld_train::dataset::build_examples;
use agentworld_train::eval::rows_of_each_domain;
use agentworld_world::row::read_jsonl_file;
use burn::tensor::activation::log_softmax;

type B = burn::backend::Flex;

fn median(v: &mut [f32]) -> f32 {
    if v.is_empty() {
        return f32::NAN;
    }
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
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
    let data = args
        .next()
        .map_or_else(|| dir.join("heldout.jsonl"), PathBuf::from);
    let rows: Vec<_> = rows_of_each_domain(read_jsonl_file(&data)?, first..first + count)
        .into_iter()
        .filter(|r| r.task == "web" || r.task == "os")
        .collect();
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
    let single = |s: &str| -> anyhow::Result<u32> {
        match tokenizer.encode(s)?.as_slice() {
            [id] => Ok(*id),
            ids => anyhow::bail!("{s:?} is {} tokens in this vocabulary, not one", ids.len()),
        }
    };
    let think_close = single("</think>")?;
    // The two values of a box, per domain; each is one token in the demo vocabulary.
    let pairs = [
        ("web", [single("true")?, single("false")?]),
        ("os", [single("\tchecked")?, single("\tunchecked")?]),
    ];
    // (domain, toggled) -> p(the value the box did not have) at each box value written.
    let mut p_flip: BTreeMap<(String, bool), Vec<f32>> = BTreeMap::new();
    for (e, row) in examples.iter().zip(&rows) {
        let Some(&(_, values)) = pairs.iter().find(|(d, _)| *d == e.domain) else {
            continue;
        };
        if e.ids.len() > engine.config.max_position_embeddings {
            continue;
        }
        let before = row.current_state();
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
        let lp = log_softmax(
            engine.model.logits(hidden.slice([0..1, start..len, 0..h])),
            2,
        );
        let vocab = lp.dims()[2];
        let lp: Vec<f32> = lp.into_data().convert::<f32>().to_vec()?;
        let mut in_observation = false;
        for (k, t) in (start..n).enumerate() {
            let truth = e.ids[t + 1];
            if truth == think_close {
                in_observation = true;
            }
            let Some(v) = values.iter().position(|&x| x == truth) else {
                continue;
            };
            if !in_observation {
                continue;
            }
            // The line written so far; it changes when the state has it with the other value.
            let line_start = e.ids[..=t]
                .iter()
                .rposition(|&id| {
                    tokenizer
                        .decode(&[id], false)
                        .is_ok_and(|s| s.contains('\n'))
                })
                .map_or(0, |i| i + 1);
            let prefix = tokenizer.decode(&e.ids[line_start..=t], false)?;
            let prefix = prefix.trim_start_matches(['\t', '\n']);
            let other = tokenizer.decode(&[values[1 - v]], false)?;
            let toggled = before
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{prefix}{other}")));
            // the value the line did not have in the state: the truth where it toggles
            let flipped = if toggled { truth } else { values[1 - v] };
            let p = lp[k * vocab + flipped as usize].exp();
            p_flip
                .entry((e.domain.clone(), toggled))
                .or_default()
                .push(p);
        }
    }
    println!(
        "| domain | toggled boxes | median p(new value) | boxes copied | median p(flipped value) |"
    );
    println!("|---|---|---|---|---|");
    for (domain, _) in pairs {
        let mut on = p_flip.remove(&(domain.into(), true)).unwrap_or_default();
        let mut off = p_flip.remove(&(domain.into(), false)).unwrap_or_default();
        println!(
            "| {domain} | {} | {:.3} | {} | {:.3} |",
            on.len(),
            median(&mut on),
            off.len(),
            median(&mut off)
        );
    }
    Ok(())
}
