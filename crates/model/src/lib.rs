#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod cache;
pub mod config;
pub mod counters;
pub mod device;
pub mod dtype;
pub mod error;
mod init;
pub mod kernels;
pub mod layers;
pub mod loader;
pub mod memory;
pub mod model;

pub use cache::{DeltaNetState, KvCache, LayerCache, ModelCache};
pub use config::{LayerType, ParamCounts, Qwen35MoeConfig};
pub use device::DeviceKind;
pub use dtype::{LoadOptions, Quantize, WeightDtype};
pub use error::{ModelError, Result};
pub use init::{INITIALIZER_RANGE, InitOptions};
pub use layers::moe::Routing;
pub use loader::{Checkpoint, ExpertLayout, LayoutReport, load_model, load_model_with};
pub use model::{Qwen35Moe, TokenBatch};

/// Backend of the unit tests: burn-flex on the CPU, f32.
#[cfg(test)]
pub(crate) type TestBackend = burn::backend::Flex;
