//! The agentworld web playground: pick a domain, load a state, compose an action, run a world
//! model (any OpenAI-compatible server, by default the `agentworld serve` that serves this
//! page) and see the predicted state drawn beside the current one, what changed highlighted.
//!
//! The plain-data modules (`model`, `sanitize`, `session`, `sse`, `profile`, `examples`,
//! `routing`)
//! build everywhere and are tested natively (`cargo test` in `web/`); the page builds for
//! wasm32 only.
#![warn(missing_docs)]

pub mod examples;
pub mod model;
pub mod profile;
pub mod routing;
pub mod sanitize;
pub mod session;
pub mod sse;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod compose;
#[cfg(target_arch = "wasm32")]
mod ctx;
#[cfg(target_arch = "wasm32")]
mod local;
#[cfg(target_arch = "wasm32")]
mod moe;
#[cfg(target_arch = "wasm32")]
mod remote;
#[cfg(target_arch = "wasm32")]
mod stage;
#[cfg(target_arch = "wasm32")]
mod step;
#[cfg(target_arch = "wasm32")]
mod teach;
#[cfg(target_arch = "wasm32")]
mod views;

#[cfg(target_arch = "wasm32")]
pub use app::App;
