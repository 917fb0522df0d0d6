#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod chat_template;
pub mod error;
pub mod generation_config;
pub mod observation;
pub mod reasoning;
mod tags;
pub mod tokenizer;
pub mod tool_calls;

pub use chat_template::{
    AGENTWORLD_TEMPLATE, ChatMessage, ChatTemplate, FunctionCall, MessageToolCall, RenderOptions,
    special_tokens_from_tokenizer_config,
};
pub use error::{Error, Result};
pub use generation_config::GenerationConfig;
pub use tokenizer::{DecodeStream, TokenOffsets, Tokenizer, token_ranges};
