//! Errors of the training pipeline.

use thiserror::Error;

/// Training-pipeline errors.
#[derive(Debug, Error)]
pub enum TrainError {
    /// A data row is malformed.
    #[error("data: {0}")]
    Data(String),
    /// Tokenizer training or use failed.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// Text layer failure.
    #[error(transparent)]
    Text(#[from] agentworld_text::Error),
    /// World layer failure.
    #[error(transparent)]
    World(#[from] agentworld_world::Error),
    /// Model failure.
    #[error(transparent)]
    Model(#[from] agentworld_model::ModelError),
    /// Engine failure.
    #[error(transparent)]
    Engine(#[from] agentworld_engine::EngineError),
    /// A training checkpoint could not be written, read or used.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The checkpoint directory or file.
        path: String,
        /// What went wrong, and what to do.
        message: String,
    },
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, TrainError>;

impl TrainError {
    pub(crate) fn checkpoint(path: &std::path::Path, message: impl std::fmt::Display) -> Self {
        Self::Checkpoint {
            path: path.display().to_string(),
            message: message.to_string(),
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
