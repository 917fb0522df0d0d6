#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod engine;
pub mod error;
pub mod files;
pub mod generate;

pub use engine::Engine;
pub use error::{EngineError, Result};
pub use files::{ModelCard, ModelFiles};
pub use generate::{FinishReason, GenerateParams, Generation};
