//! Device→host reads and kernel launches of one decode step on wgpu (issue 35), counted from
//! wgpu-core's API log (`agentworld_model::counters`). Runs with `--features test-wgpu`
//! (lavapipe in CI); on the CPU backend there is nothing to count.
#![cfg(feature = "test-wgpu")]

use std::path::Path;

use agentworld_model::counters::{self, DeviceCounts};
use agentworld_model::loader;
use agentworld_model::{LoadOptions, ModelCache, Qwen35Moe, Qwen35MoeConfig, TokenBatch};
use burn::tensor::Int;

type B = burn::backend::Wgpu;

fn demo_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/models/agentworld-demo")
}

/// Prefills `prompt`, then counts one greedy decode step: the forward of one token with the
/// cache, the argmax on the device and the read of the chosen token (what a greedy decode
/// step of the engine does, less the host-side bookkeeping).
fn count_decode_step(model: &Qwen35Moe<B>, prompt: &[u32]) -> (DeviceCounts, u32) {
    let device = Default::default();
    let mut cache: ModelCache<B> = model.new_cache(1, &device);
    let logits = model
        .forward_last(&TokenBatch::single(prompt.to_vec()), Some(&mut cache))
        .unwrap();
    let first = read_token(logits.argmax(1));
    // Everything queued so far runs before the count starts.
    let _ = <B as burn::tensor::backend::Backend>::sync(&device);
    let before = counters::counts();
    let logits = model
        .forward_last(&TokenBatch::single(vec![first]), Some(&mut cache))
        .unwrap();
    let next = read_token(logits.argmax(1));
    (counters::counts() - before, next)
}

fn read_token(ids: burn::tensor::Tensor<B, 2, Int>) -> u32 {
    ids.into_data().convert::<i64>().to_vec::<i64>().unwrap()[0] as u32
}

#[test]
fn a_decode_step_of_the_demo_model_reads_back_once() {
    assert!(
        counters::install(),
        "another log logger was installed first"
    );
    let (config, checkpoint) = loader::open_dir(&demo_dir()).unwrap();
    let (model, _) = loader::load_model_with::<B>(
        &checkpoint,
        &config,
        &Default::default(),
        LoadOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    let prompt: Vec<u32> = (1..40).collect();
    let (counts, _) = count_decode_step(&model, &prompt);
    assert!(
        counts.launches > 0,
        "no launch counted: wgpu-core's API log did not reach the counter"
    );
    assert_eq!(
        counts.reads, 1,
        "a decode step reads back the sampled token only ({counts:?})"
    );
    eprintln!("demo model, one decode step on wgpu: {counts:?}");
}

#[test]
fn launches_per_decode_step_do_not_grow_with_the_number_of_experts() {
    assert!(
        counters::install(),
        "another log logger was installed first"
    );
    let device = Default::default();
    let config = |experts: usize| {
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(demo_dir().join("config.json")).unwrap())
                .unwrap();
        json["num_experts"] = experts.into();
        Qwen35MoeConfig::from_json_str(&json.to_string(), "config.json").unwrap()
    };
    let prompt: Vec<u32> = (1..24).collect();
    let mut seen = Vec::new();
    for experts in [8, 64] {
        let model = Qwen35Moe::<B>::init(&config(experts), &device);
        // Twice: the first step may compile kernels; the second is the steady state.
        let _ = count_decode_step(&model, &prompt);
        let (counts, _) = count_decode_step(&model, &prompt);
        assert_eq!(counts.reads, 1, "{experts} experts: {counts:?}");
        seen.push((experts, counts.launches));
    }
    assert_eq!(
        seen[0].1, seen[1].1,
        "launches per decode step (experts, launches): {seen:?}"
    );
    eprintln!("launches per decode step (experts, launches): {seen:?}");
}
