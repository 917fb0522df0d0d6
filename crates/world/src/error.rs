//! The crate's one error type.

/// Everything that can go wrong in the world layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A domain name that is not one of the seven.
    #[error("unknown domain `{given}`; valid domains are: {valid}")]
    UnknownDomain {
        /// What was given.
        given: String,
        /// The valid names, comma separated.
        valid: &'static str,
    },
    /// A file or directory could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A JSON value (a row, an action) could not be read.
    #[error("line {line}: {message}")]
    Json {
        /// 1-based line of the JSONL input (1 for a single value).
        line: usize,
        /// What serde_json said.
        message: String,
    },
    /// A dataset row is inconsistent (turn index out of range, …).
    #[error("invalid row `{id}`: {message}")]
    Row {
        /// The row's id.
        id: String,
        /// What is wrong.
        message: String,
    },
    /// XML that cannot be read as a UI hierarchy.
    #[error("XML error at line {line}, column {column}: {message}")]
    Xml {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// An `android-compact` text that cannot be parsed.
    #[error("android-compact line {line}: {message}")]
    Compact {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A terminal screen or action that cannot be read.
    #[error("terminal: {0}")]
    Terminal(String),
    /// A node list that breaks the tree's depth invariant.
    #[error("invalid tree: {0}")]
    Tree(String),
    /// An action that does not follow its schema.
    #[error("invalid action: {0}")]
    Action(String),
    /// A state given to a model that cannot be put in the model's format (markup that does not
    /// parse), with what to give instead.
    #[error("state: {0}")]
    State(String),
    /// A data-generation configuration or run that cannot proceed.
    #[error("data generation: {0}")]
    Data(String),
    /// A judge's answer from which no scores could be read.
    #[error("judge output: {0}")]
    Verdict(String),
    /// A judged row that the score step cannot read.
    #[error("line {line}: {message}")]
    Score {
        /// 1-based line of the judged JSONL.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A state text from which a format's parser could read nothing at all (a partial read is
    /// not an error: it comes back with warnings).
    #[error("{format}: nothing could be read: {message}")]
    Unreadable {
        /// The format's name.
        format: String,
        /// Why.
        message: String,
    },
    /// A [`WorldEnv`](crate::env::WorldEnv) call out of order (a step on a finished episode,
    /// an observation with no pending step).
    #[error("environment: {0}")]
    Env(String),
    /// A state format name that is not registered.
    #[error("unknown state format `{given}`; valid formats are: auto, {valid}")]
    UnknownFormat {
        /// What was given.
        given: String,
        /// The registered names, comma separated.
        valid: String,
    },
}

/// Result with the crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::Io`] with a context line.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
