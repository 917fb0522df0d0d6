//! A model written by our exporter loads back through the normal loader unchanged.

use agentworld_model::loader::{self, export};
use agentworld_model::{Qwen35Moe, Qwen35MoeConfig, TokenBatch};

type B = burn::backend::Flex;

#[test]
fn exported_checkpoint_loads_back_with_identical_logits() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/parity/fused/config.json"),
    )
    .unwrap();
    let config = Qwen35MoeConfig::from_json_str(&text, "config.json").unwrap();
    let device = Default::default();
    let model = Qwen35Moe::<B>::init(&config, &device);
    let dir = tempfile::tempdir().unwrap();
    let bytes = export::to_safetensors(&model, export::ExportDtype::F32).unwrap();
    std::fs::write(dir.path().join("model.safetensors"), bytes).unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        config.to_hf_json().to_string(),
    )
    .unwrap();
    let (config2, ck) = loader::open_dir(dir.path()).unwrap();
    assert_eq!(config2.layer_types(), config.layer_types());
    let (loaded, report) = loader::load_model::<B>(&ck, &config2, &device, &mut |_, _| {}).unwrap();
    assert!(report.unused.is_empty());
    let batch = TokenBatch::single((0..70).map(|i| (i * 7 % 256) as u32).collect());
    let a = model
        .forward(&batch, None)
        .unwrap()
        .into_data()
        .to_vec::<f32>()
        .unwrap();
    let b = loaded
        .forward(&batch, None)
        .unwrap()
        .into_data()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(a, b);
}

/// A model trained with tied embeddings has no `lm_head.weight` in its checkpoint (as
/// transformers writes one) and loads back with the same logits, the head rebuilt from the
/// embedding.
#[test]
fn tied_embeddings_export_without_a_head_and_load_back() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/parity/fused/config.json"),
    )
    .unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["tie_word_embeddings"] = true.into();
    let config = Qwen35MoeConfig::from_json_str(&json.to_string(), "config.json").unwrap();
    let device = Default::default();
    let model = Qwen35Moe::<B>::init(&config, &device);
    assert!(model.lm_head.is_none());
    let bytes = export::to_safetensors(&model, export::ExportDtype::F32).unwrap();
    let names: Vec<String> = safetensors::SafeTensors::deserialize(&bytes)
        .unwrap()
        .names()
        .into_iter()
        .map(String::from)
        .collect();
    assert!(!names.iter().any(|n| n.contains("lm_head")), "{names:?}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.safetensors"), bytes).unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        config.to_hf_json().to_string(),
    )
    .unwrap();
    let (config2, ck) = loader::open_dir(dir.path()).unwrap();
    assert!(config2.tie_word_embeddings);
    let (loaded, report) = loader::load_model::<B>(&ck, &config2, &device, &mut |_, _| {}).unwrap();
    assert!(report.unused.is_empty());
    let batch = TokenBatch::single((0..40).map(|i| (i * 5 % 256) as u32).collect());
    let logits = |m: &Qwen35Moe<B>| {
        m.forward(&batch, None)
            .unwrap()
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    };
    let (a, b) = (logits(&model), logits(&loaded));
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    assert!(worst < 1e-5, "largest logit difference {worst}");
}
