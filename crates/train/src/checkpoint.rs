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
use burn::module::Module;
use burn::optim::Optimizer;
use burn::record::{BinFileRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TrainError};
use crate::trainer::{StepInfo, TrainConfig};

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
