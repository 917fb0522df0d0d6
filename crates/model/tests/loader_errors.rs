//! Broken checkpoints give errors that name the file and the tensor, never a panic.

use std::path::{Path, PathBuf};

use agentworld_model::loader;
use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, TensorView};

type B = burn::backend::Flex;

fn fixture(layout: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parity")
        .join(layout)
}

/// Copies a fixture layout into a fresh temporary directory.
fn copy_of(layout: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(layout)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

/// Loads a checkpoint directory all the way, returning the error text.
fn load_error(dir: &Path) -> String {
    let result = loader::open_dir(dir).and_then(|(config, ck)| {
        loader::load_model::<B>(&ck, &config, &Default::default(), &mut |_, _| {}).map(|_| ())
    });
    match result {
        Ok(()) => panic!("{} loaded, but it is broken", dir.display()),
        Err(e) => e.to_string(),
    }
}

/// Rewrites one shard, replacing or adding tensors.
fn rewrite(path: &Path, edit: impl FnOnce(&mut Vec<(String, Dtype, Vec<usize>, Vec<u8>)>)) {
    let bytes = std::fs::read(path).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut tensors: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.dtype(), v.shape().to_vec(), v.data().to_vec()))
        .collect();
    edit(&mut tensors);
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    std::fs::write(path, safetensors::serialize(views, None).unwrap()).unwrap();
}

#[test]
fn shard_listed_in_index_but_missing() {
    let dir = copy_of("composite");
    std::fs::remove_file(dir.path().join("model-00002-of-00003.safetensors")).unwrap();
    let msg = load_error(dir.path());
    assert!(
        msg.contains("model-00002-of-00003.safetensors") && msg.contains("index"),
        "{msg}"
    );
}

#[test]
fn tensor_listed_but_absent_from_its_shard() {
    let dir = copy_of("composite");
    let index_path = dir.path().join("model.safetensors.index.json");
    let mut index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap()).unwrap();
    let map = index["weight_map"].as_object_mut().unwrap();
    let name = map
        .iter()
        .find(|(_, s)| *s == "model-00001-of-00003.safetensors")
        .map(|(n, _)| n.clone())
        .unwrap();
    let other = "model-00002-of-00003.safetensors";
    map.insert(name.clone(), other.into());
    std::fs::write(&index_path, index.to_string()).unwrap();
    let msg = load_error(dir.path());
    assert!(msg.contains(&name) && msg.contains(other), "{msg}");
}

#[test]
fn extra_unlisted_shard_with_a_conflicting_tensor() {
    let dir = copy_of("composite");
    let stray = dir.path().join("model-stray.safetensors");
    std::fs::copy(dir.path().join("model-00003-of-00003.safetensors"), &stray).unwrap();
    let msg = load_error(dir.path());
    assert!(
        msg.contains("model-stray.safetensors") && msg.contains("not listed"),
        "{msg}"
    );
}

#[test]
fn extra_unlisted_shard_without_conflict_is_only_a_warning() {
    let dir = copy_of("composite");
    let stray = dir.path().join("notes.safetensors");
    let data = [0u8; 4];
    let views = vec![(
        "unrelated".to_string(),
        TensorView::new(Dtype::F32, vec![1], &data).unwrap(),
    )];
    std::fs::write(&stray, safetensors::serialize(views, None).unwrap()).unwrap();
    let (config, ck) = loader::open_dir(dir.path()).unwrap();
    assert!(
        ck.warnings.iter().any(|w| w.contains("notes.safetensors")),
        "{:?}",
        ck.warnings
    );
    loader::load_model::<B>(&ck, &config, &Default::default(), &mut |_, _| {}).unwrap();
}

#[test]
fn wrong_shape_names_tensor_and_file() {
    let dir = copy_of("fused");
    rewrite(&dir.path().join("model.safetensors"), |t| {
        let norm = t
            .iter_mut()
            .find(|(n, ..)| n == "model.norm.weight")
            .unwrap();
        norm.2 = vec![32];
        norm.3.truncate(64);
    });
    let msg = load_error(dir.path());
    assert!(
        msg.contains("model.norm.weight")
            && msg.contains("model.safetensors")
            && msg.contains("[32]"),
        "{msg}"
    );
}

#[test]
fn unsupported_dtype_names_tensor() {
    let dir = copy_of("fused");
    rewrite(&dir.path().join("model.safetensors"), |t| {
        let norm = t
            .iter_mut()
            .find(|(n, ..)| n == "model.norm.weight")
            .unwrap();
        norm.1 = Dtype::I16;
    });
    let msg = load_error(dir.path());
    assert!(
        msg.contains("model.norm.weight") && msg.contains("I16"),
        "{msg}"
    );
}

#[test]
fn missing_tensor_is_named() {
    let dir = copy_of("fused");
    rewrite(&dir.path().join("model.safetensors"), |t| {
        t.retain(|(n, ..)| n != "model.layers.3.self_attn.k_norm.weight")
    });
    let msg = load_error(dir.path());
    assert!(
        msg.contains("model.layers.3.self_attn.k_norm.weight"),
        "{msg}"
    );
}

#[test]
fn truncated_file_is_reported_as_such() {
    let dir = copy_of("fused");
    let path = dir.path().join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let msg = load_error(dir.path());
    assert!(
        msg.contains("model.safetensors") && msg.contains("truncated"),
        "{msg}"
    );
}

#[test]
fn config_mismatch_is_a_shape_error() {
    let dir = copy_of("fused");
    let path = dir.path().join("config.json");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "\"moe_intermediate_size\": 16",
        "\"moe_intermediate_size\": 17",
    );
    std::fs::write(&path, text).unwrap();
    let msg = load_error(dir.path());
    assert!(
        msg.contains("experts.gate_up_proj") && msg.contains("[8, 34, 64]"),
        "{msg}"
    );
}

#[test]
fn empty_directory_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let msg = load_error(dir.path());
    assert!(msg.contains("config.json"), "{msg}");
    std::fs::copy(
        fixture("fused").join("config.json"),
        dir.path().join("config.json"),
    )
    .unwrap();
    let msg = load_error(dir.path());
    assert!(msg.contains("safetensors"), "{msg}");
}

#[test]
fn bytes_loading_matches_directory_loading() {
    let dir = fixture("composite");
    let mut shards = Vec::new();
    for i in 1..=3 {
        let name = format!("model-{i:05}-of-00003.safetensors");
        shards.push((name.clone(), std::fs::read(dir.join(&name)).unwrap()));
    }
    let index = std::fs::read_to_string(dir.join("model.safetensors.index.json")).unwrap();
    let ck = loader::Checkpoint::from_bytes(shards, Some(&index)).unwrap();
    let (config, _) = loader::open_dir(&dir).unwrap();
    let (model, report) =
        loader::load_model::<B>(&ck, &config, &Default::default(), &mut |_, _| {}).unwrap();
    assert_eq!(report.prefix, "model.language_model.");
    assert_eq!(model.layers.len(), 4);
}
