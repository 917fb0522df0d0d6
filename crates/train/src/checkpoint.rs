//! Training checkpoints: the model, the optimizer state and the loss history, saved every
//! `every` steps so that a stopped run continues where it was (`agentworld train --resume`).
//!
//! Layout under the checkpoint directory:
//! - `step-000400/model.bin`, `optimizer.bin`: burn `BinFileRecorder` records at full
//!   precision (parameter ids included, so the optimizer's moments find their parameters);
//! - `step-000400/state.json`: the steps done, the settings and the loss history;
//! - `latest`: the name of the newest complete checkpoint. It is written last, through a
//!   temporary file and a rename, so a run killed while saving resumes from the one before;
//!   older checkpoints are removed only after that.
//!
//! A checkpoint made with other settings (steps, learning rate, batch size, seed) or another
//! number of training examples is refused with an error that says so: resuming it would not
//! give the run the settings describe.

use std::path::{Path, PathBuf};

use agentworld_model::Qwen35Moe;
use agentworld_model::layers::decoder_layer::{Mixer, MixerRecord};
use burn::module::Module;
use burn::optim::Optimizer;
use burn::record::{BinFileRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TrainError};
use crate::train_config::{StepInfo, TrainConfig};

/// Where and how often to save checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpointing {
    /// The checkpoint directory (created when needed).
    pub dir: PathBuf,
    /// Save after every this many steps (and after the last one); 0 saves only at the end.
    pub every: usize,
    /// Continue from the newest checkpoint in `dir` when there is one.
    pub resume: bool,
    /// Stop once this many steps are done (saving a checkpoint there), to train in several
    /// sittings; `None` runs to the end.
    pub stop_at: Option<usize>,
}

/// What a checkpoint records besides the weights and the optimizer state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// Steps done.
    pub step: usize,
    /// The settings of the run.
    pub config: TrainConfig,
    /// Training examples the run draws batches from.
    pub examples: usize,
    /// Every step so far.
    pub history: Vec<StepInfo>,
}

fn recorder() -> BinFileRecorder<FullPrecisionSettings> {
    BinFileRecorder::<FullPrecisionSettings>::new()
}

/// Shapes of every float parameter of a model, in visiting order.
fn param_shapes<B: burn::tensor::backend::Backend>(model: &Qwen35Moe<B>) -> Vec<Vec<usize>> {
    use burn::module::{ModuleVisitor, Param};
    struct Shapes(Vec<Vec<usize>>);
    impl<B: burn::tensor::backend::Backend> ModuleVisitor<B> for Shapes {
        fn visit_float<const D: usize>(&mut self, param: &Param<burn::tensor::Tensor<B, D>>) {
            self.0.push(param.val().dims().to_vec());
        }
    }
    let mut shapes = Shapes(Vec::new());
    model.visit(&mut shapes);
    shapes.0
}

/// Whether `dir` is an exported model folder (`config.json` beside safetensors weights, as
/// `agentworld train` writes and Hugging Face checkpoints are laid out) rather than a
/// training checkpoint.
pub fn is_model_dir(dir: &Path) -> bool {
    dir.join("config.json").is_file()
        && (dir.join("model.safetensors").is_file()
            || dir.join("model.safetensors.index.json").is_file())
}

/// Replaces the weights of `model` with those of an earlier run: a warm start. `at` is a
/// training checkpoint (a folder `step-NNNNNN` holding `model.bin`, or a checkpoint
/// directory, whose `latest` is taken) or an exported model folder ([`is_model_dir`]; its
/// weights, stored in bf16 there, come back rounded to bf16). Only the weights come over;
/// the optimizer, the step and the schedule start afresh, so the new run trains with its own
/// settings from the old run's weights.
///
/// # Errors
/// [`TrainError::Checkpoint`] when `at` holds no readable checkpoint, or when its weights
/// have other shapes than `model` (another model shape or vocabulary); a model folder's
/// loader errors name the tensor and shard.
pub fn warm_start<B: AutodiffBackend>(model: Qwen35Moe<B>, at: &Path) -> Result<Qwen35Moe<B>> {
    let expected = param_shapes(&model);
    let device = model.embed_tokens.weight.device();
    let (record, file) = if is_model_dir(at) {
        let (config, weights) = agentworld_model::loader::open_dir(at)?;
        let (mut loaded, _) =
            agentworld_model::loader::load_model::<B>(&weights, &config, &device, &mut |_, _| {})?;
        // The loader materialises a tied head as a transposed copy for decoding; training
        // ties it to the embedding instead.
        if config.tie_word_embeddings {
            loaded.lm_head = None;
        }
        (loaded.into_record(), at.join("config.json"))
    } else {
        let at = match std::fs::read_to_string(at.join("latest")) {
            Ok(name) => at.join(name.trim()),
            Err(_) => at.to_path_buf(),
        };
        let file = at.join("model.bin");
        if !file.is_file() {
            return Err(TrainError::checkpoint(
                &file,
                "no such file; give a checkpoint folder (`<work>/checkpoints/step-NNNNNN`), the \
                 checkpoint directory of an earlier run or an exported model folder",
            ));
        }
        // burn asserts (panics) when a record has another layer count, another layer kind or
        // another head tying than the module it is loaded into, so the record's structure is
        // checked first; shapes after.
        let record: <Qwen35Moe<B> as Module<B>>::Record =
            Recorder::<B>::load(&recorder(), at.join("model"), &device)
                .map_err(|e| TrainError::checkpoint(&file, e))?;
        (record, file)
    };
    let kinds = |mixers: Vec<bool>| {
        mixers
            .into_iter()
            .map(|linear| {
                if linear {
                    "linear_attention"
                } else {
                    "full_attention"
                }
            })
            .collect::<Vec<_>>()
    };
    let theirs = kinds(
        record
            .layers
            .iter()
            .map(|l| matches!(l.mixer, MixerRecord::LinearAttention(_)))
            .collect(),
    );
    let ours = kinds(
        model
            .layers
            .iter()
            .map(|l| matches!(l.mixer, Mixer::LinearAttention(_)))
            .collect(),
    );
    if theirs != ours || record.lm_head.is_some() != model.lm_head.is_some() {
        return Err(TrainError::checkpoint(
            &file,
            format!(
                "its weights do not fit this model (layers {theirs:?}, {} lm_head in the \
                 checkpoint; {ours:?}, {} here); warm-start from a run with the same model \
                 shape and tokenizer",
                if record.lm_head.is_some() {
                    "an"
                } else {
                    "no (tied)"
                },
                if model.lm_head.is_some() {
                    "an"
                } else {
                    "no (tied)"
                },
            ),
        ));
    }
    let loaded = model.load_record(record);
    let found = param_shapes(&loaded);
    if found != expected {
        let first = expected
            .iter()
            .zip(&found)
            .position(|(a, b)| a != b)
            .unwrap_or(expected.len().min(found.len()));
        return Err(TrainError::checkpoint(
            &file,
            format!(
                "its weights do not fit this model (parameter {first}: {:?} in the checkpoint, \
                 {:?} here); warm-start from a run with the same model shape and tokenizer",
                found.get(first),
                expected.get(first)
            ),
        ));
    }
    Ok(loaded)
}

impl Checkpointing {
    /// The newest complete checkpoint: its folder and state. `None` when there is none.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] when `latest` names a folder whose state is missing or
    /// unreadable.
    pub fn latest(&self) -> Result<Option<(PathBuf, TrainState)>> {
        let pointer = self.dir.join("latest");
        let Ok(name) = std::fs::read_to_string(&pointer) else {
            return Ok(None);
        };
        let at = self.dir.join(name.trim());
        let state_path = at.join("state.json");
        let text = std::fs::read_to_string(&state_path).map_err(|e| {
            TrainError::checkpoint(
                &state_path,
                format!("{e}; delete {} to start over", self.dir.display()),
            )
        })?;
        let state: TrainState = serde_json::from_str(&text).map_err(|e| {
            TrainError::checkpoint(&state_path, format!("not a training state: {e}"))
        })?;
        Ok(Some((at, state)))
    }

    /// Saves a checkpoint of `model`, `optimizer` and `state` (see the module docs).
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] or [`TrainError::Io`] when a file cannot be written; the
    /// previous checkpoint is then still the latest.
    pub fn save<B, O>(&self, model: &Qwen35Moe<B>, optimizer: &O, state: &TrainState) -> Result<()>
    where
        B: AutodiffBackend,
        O: Optimizer<Qwen35Moe<B>, B>,
    {
        let name = format!("step-{:06}", state.step);
        let at = self.dir.join(&name);
        std::fs::create_dir_all(&at).map_err(|e| TrainError::io(&at, e))?;
        model
            .clone()
            .save_file(at.join("model"), &recorder())
            .map_err(|e| TrainError::checkpoint(&at.join("model.bin"), e))?;
        Recorder::<B>::record(&recorder(), optimizer.to_record(), at.join("optimizer"))
            .map_err(|e| TrainError::checkpoint(&at.join("optimizer.bin"), e))?;
        let state_path = at.join("state.json");
        std::fs::write(&state_path, serde_json::to_string(state).expect("json"))
            .map_err(|e| TrainError::io(&state_path, e))?;
        let previous = std::fs::read_to_string(self.dir.join("latest")).ok();
        let tmp = self.dir.join("latest.tmp");
        std::fs::write(&tmp, &name).map_err(|e| TrainError::io(&tmp, e))?;
        std::fs::rename(&tmp, self.dir.join("latest"))
            .map_err(|e| TrainError::io(&self.dir.join("latest"), e))?;
        if let Some(old) = previous
            .map(|p| p.trim().to_string())
            .filter(|p| *p != name)
        {
            // Best effort: a leftover folder costs disk, not correctness.
            let _ = std::fs::remove_dir_all(self.dir.join(old));
        }
        Ok(())
    }

    /// Loads the checkpoint at `at` into `model` and `optimizer`, after checking that it was
    /// made with `config` and `examples` training examples.
    ///
    /// # Errors
    /// [`TrainError::Checkpoint`] for other settings or unreadable records.
    pub fn load<B, O>(
        &self,
        at: &Path,
        state: &TrainState,
        config: &TrainConfig,
        examples: usize,
        model: Qwen35Moe<B>,
        optimizer: O,
    ) -> Result<(Qwen35Moe<B>, O)>
    where
        B: AutodiffBackend,
        O: Optimizer<Qwen35Moe<B>, B>,
    {
        if state.config != *config || state.examples != examples {
            return Err(TrainError::checkpoint(
                at,
                format!(
                    "it was made with other settings ({:?}, {} examples; this run: {:?}, {} examples); \
                     resume with the same options, or delete {} to start over",
                    state.config,
                    state.examples,
                    config,
                    examples,
                    self.dir.display()
                ),
            ));
        }
        let device = model.embed_tokens.weight.device();
        let model = model
            .load_file(at.join("model"), &recorder(), &device)
            .map_err(|e| TrainError::checkpoint(&at.join("model.bin"), e))?;
        let record = Recorder::<B>::load(&recorder(), at.join("optimizer"), &device)
            .map_err(|e| TrainError::checkpoint(&at.join("optimizer.bin"), e))?;
        Ok((model, optimizer.load_record(record)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_model::Qwen35MoeConfig;
    use burn::backend::{Autodiff, Flex};

    fn config(hidden: usize) -> Qwen35MoeConfig {
        let j = serde_json::json!({
            "vocab_size": 16, "hidden_size": hidden, "num_hidden_layers": 2,
            "layer_types": ["linear_attention", "full_attention"],
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
            "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_key_head_dim": 8,
            "linear_value_head_dim": 8, "linear_conv_kernel_dim": 4, "num_experts": 2,
            "num_experts_per_tok": 1, "moe_intermediate_size": 8,
            "shared_expert_intermediate_size": 8, "rms_norm_eps": 1e-6,
            "model_type": "qwen3_5_moe_text"
        });
        Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap()
    }

    #[test]
    fn warm_start_loads_weights_and_refuses_another_shape() {
        type B = Autodiff<Flex>;
        let dev = Default::default();
        let dir = tempfile::tempdir().unwrap();
        let saved = Qwen35Moe::<B>::init(&config(16), &dev);
        saved
            .clone()
            .save_file(dir.path().join("model"), &recorder())
            .unwrap();
        let loaded = warm_start(Qwen35Moe::<B>::init(&config(16), &dev), dir.path()).unwrap();
        assert_eq!(
            loaded.embed_tokens.weight.val().into_data(),
            saved.embed_tokens.weight.val().into_data()
        );

        let err = warm_start(Qwen35Moe::<B>::init(&config(24), &dev), dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("do not fit this model"), "{err}");
        // Another layer count or kind: burn would panic loading it; refused instead.
        for (layers, kinds) in [
            (
                3,
                serde_json::json!(["linear_attention", "full_attention", "linear_attention"]),
            ),
            (2, serde_json::json!(["full_attention", "full_attention"])),
        ] {
            let mut j: serde_json::Value =
                serde_json::from_str(&serde_json::to_string(&config(16)).unwrap()).unwrap();
            j["num_hidden_layers"] = layers.into();
            j["layer_types"] = kinds;
            let other = Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap();
            let err = warm_start(Qwen35Moe::<B>::init(&other, &dev), dir.path())
                .unwrap_err()
                .to_string();
            assert!(err.contains("do not fit this model"), "{err}");
        }
        let err = warm_start(
            Qwen35Moe::<B>::init(&config(16), &dev),
            &dir.path().join("nothing"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("model.bin"), "{err}");
    }
}
