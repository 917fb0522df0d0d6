//! The crate's error type.

/// Everything that can go wrong in this crate.
///
/// Parsers of model output ([`crate::reasoning`], [`crate::observation`], [`crate::tool_calls`])
/// never fail: malformed output is part of their normal input. Errors come from loading
/// tokenizers, configs and templates, and from rendering templates.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The `tokenizers` crate rejected a tokenizer file, or failed to encode or decode.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A token that the caller required is not in the vocabulary.
    #[error("token {0:?} is not in the vocabulary")]
    UnknownToken(String),
    /// A JSON file (tokenizer config, generation config, ...) could not be parsed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// A config file parsed as JSON but does not have the expected shape.
    #[error("config: {0}")]
    Config(String),
    /// No chat template was found where one was expected.
    #[error("no chat template: {0}")]
    MissingChatTemplate(String),
    /// A chat template failed to compile or to render.
    #[error("chat template: {0:#}")]
    Template(#[source] minijinja::Error),
    /// A chat template called `raise_exception(message)`, e.g. "No user query found in messages.".
    ///
    /// This is the caller's fault (bad messages), not the server's: map it to a 400.
    #[error("chat template raised: {0}")]
    TemplateRaised(String),
    /// A chat message could not be turned into a template value.
    #[error("invalid chat message {index}: {reason}")]
    InvalidMessage {
        /// Position of the message in the conversation.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading a file failed.
    #[cfg(feature = "native")]
    #[error("reading {path}: {source}")]
    Io {
        /// The file that could not be read.
        path: std::path::PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl From<tokenizers::Error> for Error {
    fn from(err: tokenizers::Error) -> Self {
        Error::Tokenizer(err.to_string())
    }
}

/// Reads a whole file, naming the path in the error.
#[cfg(feature = "native")]
pub(crate) fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
