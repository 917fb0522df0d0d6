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
