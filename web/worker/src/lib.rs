//! The in-browser engine: the world model (burn) in a Web Worker, so the page never freezes.
//! WebGPU when the worker's `navigator.gpu` gives an adapter, else burn's CPU backend (Flex)
//! compiled to wasm; the page is told which.
//!
//! Protocol (JSON strings both ways):
//! - in: `{"kind":"load","base":"public/models/agentworld-demo/","max_buffer_mb":null}`,
//!   `{"kind":"generate","messages":[…],"max_tokens":700,"temperature":0,"copy_bias":15}`,
//!   `{"kind":"stop"}`;
//! - out: `{"kind":"alive"}`, `{"kind":"loading","what":…}`,
//!   `{"kind":"ready","backend":"webgpu"|"cpu","note":…}`, `{"kind":"thinking","text":…}`,
//!   `{"kind":"content","text":…}`, `{"kind":"routing","text":…,"experts":[[…]],"weights":[[…]]}`
//!   (per generated token, per layer), `{"kind":"done","finish":…,"tokens":n}`,
//!   `{"kind":"error","message":…}`.
#![warn(missing_docs)]

use serde::{Deserialize, Serialize};

/// A message from the page.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Request {
    /// Load the model folder at `base` (a URL ending in `/`).
    Load {
        /// The folder's URL.
        base: String,
        /// Use the CPU even when WebGPU is there.
        #[serde(default)]
        cpu: bool,
        /// Treat the device as allowing at most this many MB per buffer (shows the refusal
        /// of a model whose largest tensor does not fit; the page's `?max-buffer-mb=N`).
        #[serde(default)]
        max_buffer_mb: Option<u64>,
    },
    /// Generate an answer to `messages`.
    Generate {
        /// The chat messages.
        messages: Vec<agentworld_world::Message>,
        /// Most tokens.
        max_tokens: usize,
        /// Sampling temperature (0: greedy).
        temperature: f32,
        /// The copy prior (nats; 0 or absent: off), the card's for the domain.
        #[serde(default)]
        copy_bias: f32,
    },
    /// Stop the running generation.
    Stop,
}

/// A message to the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// The worker runs and listens.
    Alive,
    /// Loading progress.
    Loading {
        /// What is being done.
        what: String,
    },
    /// The model is loaded.
    Ready {
        /// `webgpu` or `cpu`.
        backend: String,
        /// Why the CPU is used, or the adapter's name.
        note: String,
    },
    /// Reasoning text.
    Thinking {
        /// The piece.
        text: String,
    },
    /// Answer text.
    Content {
        /// The piece.
        text: String,
    },
    /// Which experts each layer chose for one generated token (sent before its text).
    Routing {
        /// The token's text.
        text: String,
        /// Per layer, the chosen expert ids, highest router probability first.
        experts: Vec<Vec<u32>>,
        /// Per layer, their renormalised weights.
        weights: Vec<Vec<f32>>,
    },
    /// Generation ended.
    Done {
        /// `stop` or `length`.
        finish: String,
        /// Tokens generated.
        tokens: usize,
    },
    /// Something failed.
    Error {
        /// What.
        message: String,
    },
}

#[cfg(target_arch = "wasm32")]
mod worker;
