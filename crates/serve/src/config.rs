//! [`ServeConfig`]: the server's settings (the `agentworld serve` flags).

use crate::error::{Result, ServeError};

/// Settings of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// The model id clients send and `/v1/models` lists.
    pub model_name: String,
    /// Most sequences decoded together.
    pub max_batch: usize,
    /// Most requests waiting for a batch slot; more get 503 with `Retry-After`.
    pub max_queue: usize,
    /// Longest prompt plus output in tokens; `None`: the model's context.
    pub max_model_len: Option<usize>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            model_name: "agentworld".into(),
            max_batch: 16,
            max_queue: 256,
            max_model_len: None,
        }
    }
}

impl ServeConfig {
    /// Checks the settings that do not depend on the model.
    ///
    /// # Errors
    /// [`ServeError::Config`] naming the flag that is out of range.
    pub fn validate(&self) -> Result<()> {
        if self.model_name.trim().is_empty() {
            return Err(ServeError::Config(
                "--served-model-name must not be empty".into(),
            ));
        }
        if self.max_batch == 0 {
            return Err(ServeError::Config("--max-batch must be at least 1".into()));
        }
        if self.max_queue == 0 {
            return Err(ServeError::Config("--max-queue must be at least 1".into()));
        }
        if self.max_model_len == Some(0) {
            return Err(ServeError::Config(
                "--max-model-len must be at least 1".into(),
            ));
        }
        Ok(())
    }
}
