//! Trains agentworld's demo world model: real transitions in, a standard Hugging Face model
//! directory out (config.json, model.safetensors, tokenizer.json, chat_template.jinja,
//! agentworld.json), loadable by our loader and by transformers alike.
#![warn(missing_docs)]

pub mod agreement;
pub mod checkpoint;
pub mod dataset;
pub mod error;
pub mod eval;
pub mod plot;
pub mod probe;
pub mod recipe;
pub mod routing;
pub mod tokenizer;
pub mod train_config;
pub mod trainer;

pub use error::{Result, TrainError};
