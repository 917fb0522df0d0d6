//! Errors of the model crate: bad configs, bad checkpoints, bad inputs.
//!
//! Every variant names what is wrong and where (file, field, tensor), so that a user holding
//! a broken checkpoint can fix it without reading our source.

use thiserror::Error;

/// Everything that can go wrong while reading a config or a checkpoint, or running the model.
#[derive(Debug, Error)]
pub enum ModelError {
    /// `config.json` could not be parsed or is missing a required field.
    #[error("{file}: {message}")]
    Config {
        /// The config file (or `<bytes>` when read from memory).
        file: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A safetensors file is malformed or truncated.
    #[error("{file}: not a valid safetensors file ({message})")]
    Safetensors {
        /// The shard file.
        file: String,
        /// Parser message.
        message: String,
    },
    /// `model.safetensors.index.json` is malformed, or disagrees with the shards.
    #[error("{file}: {message}")]
    Index {
        /// The index file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A tensor the model needs is not in the checkpoint.
    #[error("tensor `{tensor}` is missing from the checkpoint{hint}")]
    MissingTensor {
        /// The checkpoint key that was looked up.
        tensor: String,
        /// Where it was expected (e.g. ` (index maps it to shard X, which does not hold it)`).
        hint: String,
    },
    /// A tensor has the wrong shape.
    #[error("{file}: tensor `{tensor}` has shape {found:?}, expected {expected:?}")]
    Shape {
        /// The shard holding it.
        file: String,
        /// The checkpoint key.
        tensor: String,
        /// Shape in the file.
        found: Vec<usize>,
        /// Shape the config implies.
        expected: Vec<usize>,
    },
    /// A tensor has a dtype we cannot load.
    #[error("{file}: tensor `{tensor}` has dtype {dtype}; supported: BF16, F16, F32")]
    Dtype {
        /// The shard holding it.
        file: String,
        /// The checkpoint key.
        tensor: String,
        /// The dtype found.
        dtype: String,
    },
    /// The caller passed an input the model cannot run (empty batch, ragged mask, too long).
    #[error("invalid input: {0}")]
    Input(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ModelError>;

impl ModelError {
    pub(crate) fn config(file: &str, message: impl Into<String>) -> Self {
        Self::Config {
            file: file.to_string(),
            message: message.into(),
        }
    }
}
