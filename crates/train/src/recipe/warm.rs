//! Warm starts ([`super::BuildOptions::init_from`]): finding the earlier run's tokenizer and
//! refusing one that is not this run's, or a checkpoint this run would overwrite.

use std::path::{Path, PathBuf};

use crate::error::{Result, TrainError};

/// The tokenizer of the run a warm start comes from: its path and text, looked for in an
/// exported model folder itself, or in the folders above a checkpoint
/// (`<work>/checkpoints/step-N`); `None` for a checkpoint kept elsewhere. A checkpoint inside this run's own checkpoint directory is refused: the run
/// overwrites it (and removes older checkpoints as it saves new ones).
pub(super) fn source_tokenizer(
    checkpoint: &Path,
    work_dir: &Path,
) -> Result<Option<(PathBuf, String)>> {
    let at = checkpoint
        .canonicalize()
        .map_err(|e| TrainError::io(checkpoint, e))?;
    if let Ok(own) = work_dir.join("checkpoints").canonicalize()
        && at.starts_with(&own)
    {
        return Err(TrainError::checkpoint(
            checkpoint,
            format!(
                "it is in this run's own checkpoint directory ({}), which the run overwrites; \
                 give this run another --work or --out, or copy the checkpoint elsewhere",
                own.display()
            ),
        ));
    }
    // A model folder holds its own; a checkpoint's is in the work directory above it.
    let Some(path) = at
        .ancestors()
        .take(3)
        .map(|d| d.join("tokenizer.json"))
        .find(|f| f.is_file())
    else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| TrainError::io(&path, e))?;
    Ok(Some((path, text)))
}

/// Refuses a warm start from a run whose tokenizer (`theirs`, read from `path`) differs from
/// this one's: the token ids would mean other text.
pub(super) fn same_tokenizer(path: &Path, theirs: &str, ours: &str) -> Result<()> {
    let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
    if parse(theirs) != parse(ours) {
        return Err(TrainError::checkpoint(
            path,
            "that run's tokenizer is not this run's; copy its train.jsonl, heldout.jsonl and \
             tokenizer.json into the work directory and pass --resume",
        ));
    }
    Ok(())
}
