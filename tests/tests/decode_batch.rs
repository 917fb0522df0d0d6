//! Continuous batching on the demo model: sequences that join a running batch mid-flight, or
//! leave it early, produce exactly what they produce alone.

use std::collections::HashMap;

use agentworld_engine::sampling::SamplingParams;
use agentworld_engine::{DecodeBatch, Engine, GenerateParams};
use agentworld_tests::demo_model;
use agentworld_train::dataset::prompt_text;
use agentworld_world::row::read_jsonl_file;

type B = burn::backend::Flex;

fn setup() -> (Engine<B>, Vec<Vec<u32>>) {
    let engine = Engine::<B>::load_dir(&demo_model(), &Default::default(), &mut |_, _| {})
        .expect("the demo model loads");
    let rows = read_jsonl_file(demo_model().join("heldout.jsonl")).unwrap();
    let prompts = rows
        .iter()
        .filter(|r| r.task == "android")
        .take(2)
        .chain(rows.iter().filter(|r| r.task == "terminal").take(2))
        .map(|r| {
            engine
                .encode(&prompt_text(r, &engine.template).unwrap())
                .unwrap()
        })
        .collect();
    (engine, prompts)
}

/// Runs the batch to the end, collecting each id's tokens.
fn drain(batch: &mut DecodeBatch<'_, B>, out: &mut HashMap<u64, Vec<u32>>) {
    while !batch.is_empty() {
        for e in batch.step().unwrap() {
            out.entry(e.id).or_default().extend(e.token);
        }
    }
}

fn step_n(batch: &mut DecodeBatch<'_, B>, n: usize, out: &mut HashMap<u64, Vec<u32>>) {
    for _ in 0..n {
        for e in batch.step().unwrap() {
            out.entry(e.id).or_default().extend(e.token);
        }
    }
}

fn add(
    batch: &mut DecodeBatch<'_, B>,
    id: u64,
    prompt: &[u32],
    params: &GenerateParams,
    out: &mut HashMap<u64, Vec<u32>>,
) {
    let e = batch.add(id, prompt, params).unwrap();
    out.entry(id).or_default().extend(e.token);
}

#[test]
fn sequences_joining_and_leaving_mid_flight_match_one_at_a_time() {
    let (engine, prompts) = setup();
    let greedy = GenerateParams {
        max_tokens: 40,
        sampling: SamplingParams::greedy(),
    };
    let sampled = GenerateParams {
        max_tokens: 40,
        sampling: SamplingParams {
            temperature: 0.8,
            top_k: 20,
            top_p: 0.95,
            seed: 1234,
            copy_bias: 0.0,
        },
    };
    let params = [&greedy, &greedy, &sampled, &greedy];
    let alone: Vec<Vec<u32>> = prompts
        .iter()
        .zip(params)
        .map(|(p, params)| engine.generate(p, params, &mut |_| {}).unwrap().token_ids)
        .collect();

    let mut batch = DecodeBatch::new(&engine);
    let mut out = HashMap::new();
    add(&mut batch, 0, &prompts[0], params[0], &mut out);
    step_n(&mut batch, 5, &mut out);
    add(&mut batch, 1, &prompts[1], params[1], &mut out);
    add(&mut batch, 2, &prompts[2], params[2], &mut out);
    step_n(&mut batch, 3, &mut out);
    assert!(batch.cancel(1), "a running sequence can be cancelled");
    assert!(!batch.cancel(1));
    add(&mut batch, 3, &prompts[3], params[3], &mut out);
    drain(&mut batch, &mut out);
    assert_eq!(batch.cached_positions(), 0, "an empty batch holds no cache");

    for id in [0, 2, 3] {
        assert_eq!(
            out[&(id as u64)],
            alone[id],
            "sequence {id} joined mid-flight"
        );
    }
    let cut = &out[&1];
    assert!(
        alone[1].starts_with(cut) && cut.len() < alone[1].len(),
        "the cancelled sequence stopped early: {} of {} tokens",
        cut.len(),
        alone[1].len()
    );
}

#[test]
fn bad_requests_leave_the_batch_unchanged() {
    let (engine, prompts) = setup();
    let params = GenerateParams {
        max_tokens: 4,
        sampling: SamplingParams::greedy(),
    };
    let mut batch = DecodeBatch::new(&engine);
    batch.add(7, &prompts[0], &params).unwrap();
    assert!(batch.add(7, &prompts[1], &params).is_err(), "duplicate id");
    assert!(batch.add(8, &[], &params).is_err(), "empty prompt");
    let long = vec![prompts[0][0]; engine.max_context()];
    assert!(
        batch.add(9, &long, &params).is_err(),
        "prompt fills the context"
    );
    let zero = GenerateParams {
        max_tokens: 0,
        ..params
    };
    assert!(batch.add(10, &prompts[1], &zero).is_err(), "max_tokens 0");
    assert_eq!(batch.ids(), vec![7]);
    let mut out = HashMap::new();
    drain(&mut batch, &mut out);
    assert!(out[&7].len() <= 3, "max_tokens counts the first token too");
}
