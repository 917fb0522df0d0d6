//! Training parity: burn's autodiff through our model gives the gradients transformers gives.
//!
//! Fixture: `tests/fixtures/grad_reference.json`, written by `tools/parity/make_grad_fixture.py`
//! (transformers, float64) for the parity model on a batch of two 150-token sequences. Per parameter it holds
//! the gradient's sum and sum of squares, which do not depend on layout (our linear weights are
//! stored transposed).
//!
//! Runs on burn-flex (CPU), or with `--features test-wgpu` on wgpu (lavapipe in CI), the
//! backend a GPU training run (`agentworld train demo --backend wgpu|cuda`) differentiates on.

use std::path::Path;

use agentworld_model::layers::decoder_layer::Mixer;
use agentworld_model::{Qwen35Moe, loader};
use agentworld_train::dataset::Example;
use agentworld_train::trainer::batch_loss;
use burn::backend::Autodiff;
use burn::tensor::Tensor;
use serde_json::Value;

#[cfg(not(feature = "test-wgpu"))]
type B = Autodiff<burn::backend::Flex>;
#[cfg(feature = "test-wgpu")]
type B = Autodiff<burn::backend::Wgpu>;

type Grads = <B as burn::tensor::backend::AutodiffBackend>::Gradients;

/// Every parameter's gradient, flattened, by HF name. The gradient must be read from the
/// parameter's own tensor (a reshaped copy is a new graph node with no gradient).
fn named_grads(model: &Qwen35Moe<B>, grads: &Grads) -> Vec<(String, Option<Vec<f32>>)> {
    fn g<const D: usize>(t: Tensor<B, D>, grads: &Grads) -> Option<Vec<f32>> {
        t.grad(grads)
            .map(|g| g.into_data().to_vec::<f32>().unwrap())
    }
    let mut out: Vec<(String, Option<Vec<f32>>)> = Vec::new();
    let mut put = |name: String, v: Option<Vec<f32>>| out.push((name, v));
    let flat2 = |t: Tensor<B, 2>| g(t, grads);
    let flat3 = |t: Tensor<B, 3>| g(t, grads);
    let one = |t: Tensor<B, 1>| g(t, grads);
    put(
        "model.embed_tokens.weight".into(),
        flat2(model.embed_tokens.weight.val()),
    );
    put("model.norm.weight".into(), one(model.norm.weight.val()));
    if let Some(head) = &model.lm_head {
        put("lm_head.weight".into(), flat2(head.weight.val()));
    }
    for (i, layer) in model.layers.iter().enumerate() {
        let p = format!("model.layers.{i}.");
        put(
            format!("{p}input_layernorm.weight"),
            one(layer.input_layernorm.weight.val()),
        );
        put(
            format!("{p}post_attention_layernorm.weight"),
            one(layer.post_attention_layernorm.weight.val()),
        );
        match &layer.mixer {
            Mixer::LinearAttention(d) => {
                let a = format!("{p}linear_attn.");
                put(
                    format!("{a}in_proj_qkv.weight"),
                    flat2(d.in_proj_qkv.weight.val()),
                );
                put(
                    format!("{a}in_proj_z.weight"),
                    flat2(d.in_proj_z.weight.val()),
                );
                put(
                    format!("{a}in_proj_b.weight"),
                    flat2(d.in_proj_b.weight.val()),
                );
                put(
                    format!("{a}in_proj_a.weight"),
                    flat2(d.in_proj_a.weight.val()),
                );
                put(
                    format!("{a}out_proj.weight"),
                    flat2(d.out_proj.weight.val()),
                );
                put(format!("{a}conv1d.weight"), flat2(d.conv1d.val()));
                put(format!("{a}dt_bias"), one(d.dt_bias.val()));
                put(format!("{a}A_log"), one(d.a_log.val()));
                put(format!("{a}norm.weight"), one(d.norm.weight.val()));
            }
            Mixer::FullAttention(s) => {
                let a = format!("{p}self_attn.");
                put(format!("{a}q_proj.weight"), flat2(s.q_proj.weight.val()));
                put(format!("{a}k_proj.weight"), flat2(s.k_proj.weight.val()));
                put(format!("{a}v_proj.weight"), flat2(s.v_proj.weight.val()));
                put(format!("{a}o_proj.weight"), flat2(s.o_proj.weight.val()));
                put(format!("{a}q_norm.weight"), one(s.q_norm.weight.val()));
                put(format!("{a}k_norm.weight"), one(s.k_norm.weight.val()));
            }
        }
        let m = format!("{p}mlp.");
        put(
            format!("{m}gate.weight"),
            flat2(layer.mlp.gate.weight.val()),
        );
        put(
            format!("{m}experts.gate_up_proj"),
            flat3(layer.mlp.experts.gate_up_proj.val()),
        );
        put(
            format!("{m}experts.down_proj"),
            flat3(layer.mlp.experts.down_proj.val()),
        );
        let s = &layer.mlp.shared_expert;
        put(
            format!("{m}shared_expert.gate_proj.weight"),
            flat2(s.gate_proj.weight.val()),
        );
        put(
            format!("{m}shared_expert.up_proj.weight"),
            flat2(s.up_proj.weight.val()),
        );
        put(
            format!("{m}shared_expert.down_proj.weight"),
            flat2(s.down_proj.weight.val()),
        );
        put(
            format!("{m}shared_expert_gate.weight"),
            flat2(layer.mlp.shared_expert_gate.weight.val()),
        );
    }
    out
}

#[test]
fn gradients_match_transformers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/fixtures/grad_reference.json")).unwrap(),
    )
    .unwrap();
    let dir = root.join("../model/tests/fixtures/parity/fused");
    let (config, checkpoint) = loader::open_dir(&dir).unwrap();
    let (model, _) =
        loader::load_model::<B>(&checkpoint, &config, &Default::default(), &mut |_, _| {}).unwrap();
    let examples: Vec<Example> = fixture["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| Example {
            ids: row
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect(),
            completion_start: 1,
            domain: "x".into(),
            row_id: "x".into(),
        })
        .collect();
    let batch: Vec<&Example> = examples.iter().collect();
    let (loss, _) = batch_loss(&model, &batch, 0).unwrap();
    let loss_value = loss.clone().into_data().to_vec::<f32>().unwrap()[0] as f64;
    let want_loss = fixture["loss"].as_f64().unwrap();
    assert!(
        (loss_value - want_loss).abs() < 1e-4,
        "loss {loss_value} vs {want_loss}"
    );
    let grads = loss.backward();
    let mut report = Vec::new();
    let mut bad = Vec::new();
    for (name, v) in named_grads(&model, &grads) {
        let want = &fixture["grads"][&name];
        assert!(!want.is_null(), "no reference for {name}");
        let v = v.unwrap_or_else(|| panic!("no gradient for {name}"));
        let sum: f64 = v.iter().map(|x| *x as f64).sum();
        let sumsq: f64 = v.iter().map(|x| (*x as f64) * (*x as f64)).sum();
        let (ws, wq) = (
            want["sum"].as_f64().unwrap(),
            want["sumsq"].as_f64().unwrap(),
        );
        let ok_sum = (sum - ws).abs() <= 1e-4 * (1.0 + wq.sqrt() * (v.len() as f64).sqrt());
        let ok_sq = (sumsq.sqrt() - wq.sqrt()).abs() <= 1e-3 * (1e-6 + wq.sqrt());
        report.push(format!(
            "{name}: norm {:.4e} vs {:.4e}, sum {sum:.3e} vs {ws:.3e}",
            sumsq.sqrt(),
            wq.sqrt()
        ));
        if !(ok_sum && ok_sq) {
            bad.push(report.last().unwrap().clone());
        }
    }
    assert!(
        bad.is_empty(),
        "gradients differ from transformers:\n{}",
        bad.join("\n")
    );
}
