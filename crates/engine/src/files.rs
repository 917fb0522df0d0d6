//! The files of a model directory, held in memory (for the browser, for an embedded model, or
//! for tests), and the optional `agentworld.json` card.
//!
//! A model directory is a standard Hugging Face folder: `config.json`, `model.safetensors` (or
//! shards plus `model.safetensors.index.json`), `tokenizer.json`, and the chat template as
//! `chat_template.jinja` or inside `tokenizer_config.json`; `generation_config.json` is
//! optional. Our own models add `agentworld.json` (see [`ModelCard`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `agentworld.json`: what a model made by this project says about itself.
///
/// Every field is optional, so checkpoints from elsewhere (which have no card) and cards from
/// newer versions both load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelCard {
    /// Short model name (`agentworld-demo`).
    pub name: String,
    /// One-paragraph description.
    pub description: String,
    /// Per domain (`android`, ...), the state representation the model was trained on
    /// (`android-compact`); states given in another format are converted to it first.
    pub state_formats: BTreeMap<String, String>,
    /// A folder inside the model directory holding `<domain>/system_prompt.txt`: the system
    /// prompts the model was trained with.
    pub prompts_dir: Option<String>,
    /// Sensible `max_tokens` for one observation.
    pub max_new_tokens: Option<usize>,
    /// Domains the model was trained on.
    pub domains: Vec<String>,
    /// How the model was made (free-form: data, steps, seed, command).
    pub training: Option<serde_json::Value>,
    /// Held-out figures (free-form, written by `agentworld eval`).
    pub evaluation: Option<serde_json::Value>,
}

/// Every file of a model directory, in memory.
#[derive(Debug, Clone, Default)]
pub struct ModelFiles {
    /// `config.json` text.
    pub config_json: String,
    /// Safetensors shards as `(file name, bytes)`.
    pub shards: Vec<(String, Vec<u8>)>,
    /// `model.safetensors.index.json` text, for sharded checkpoints.
    pub index_json: Option<String>,
    /// `tokenizer.json` bytes.
    pub tokenizer_json: Vec<u8>,
    /// `tokenizer_config.json` bytes (special tokens; maybe the chat template).
    pub tokenizer_config_json: Option<Vec<u8>>,
    /// `chat_template.jinja` text; takes precedence over `tokenizer_config.json`.
    pub chat_template: Option<String>,
    /// `generation_config.json` bytes.
    pub generation_config_json: Option<Vec<u8>>,
    /// `agentworld.json`, parsed.
    pub card: Option<ModelCard>,
    /// Other small text files by relative path (e.g. `prompts/terminal/system_prompt.txt`).
    pub extra: BTreeMap<String, String>,
}
