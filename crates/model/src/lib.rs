#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod cache;
pub mod config;
pub mod error;
mod init;
pub mod kernels;
pub mod layers;
pub mod loader;
pub mod model;
pub mod sampling;

pub use cache::{DeltaNetState, KvCache, LayerCache, ModelCache};
pub use config::{LayerType, ParamCounts, Qwen35MoeConfig};
pub use error::{ModelError, Result};
pub use init::{INITIALIZER_RANGE, InitOptions};
pub use layers::moe::Routing;
pub use loader::{Checkpoint, ExpertLayout, LayoutReport, load_model};
pub use model::{Qwen35Moe, TokenBatch};
pub use sampling::{Sampler, SamplingParams};

/// Backend of the unit tests: burn-flex on the CPU, f32.
#[cfg(test)]
pub(crate) type TestBackend = burn::backend::Flex;
