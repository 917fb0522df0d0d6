//! Errors of the engine: everything that can go wrong between a model directory and text.

use thiserror::Error;

/// Engine errors.
#[derive(Debug, Error)]
pub enum EngineError {
    /// Loading or running the model failed.
    #[error(transparent)]
    Model(#[from] agentworld_model::ModelError),
    /// Tokenizer or chat template failure.
    #[error(transparent)]
    Text(#[from] agentworld_text::Error),
    /// A file of the model directory is missing or unreadable.
    #[error("cannot read {path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The request cannot be served as asked (e.g. a prompt longer than the context).
    #[error("{0}")]
    Request(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, EngineError>;
