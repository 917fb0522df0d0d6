#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod batch;
mod engine;
pub mod error;
pub mod files;
pub mod generate;
mod generate_async;
pub mod marks;
pub mod sampling;

pub use batch::{DecodeBatch, SequenceEvent};
pub use engine::Engine;
pub use error::{EngineError, Result};
pub use files::{CopyFrom, ModelCard, ModelFiles, check_buffer_limit};
pub use generate::{
    FinishReason, GenerateParams, Generation, NamedBias, PromptMarks, encode_prompt_marks,
    marked_prompt, thinking_lead,
};
pub use generate_async::TokenRouting;
pub use sampling::{Sampler, SamplingParams};
