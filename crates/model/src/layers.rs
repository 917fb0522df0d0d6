//! The blocks of a Qwen3.5-MoE decoder, one per file.

pub mod attention;
pub mod decoder_layer;
pub mod delta_rule;
pub mod gated_delta_net;
pub mod mlp;
pub mod moe;
pub mod rms_norm;
pub mod rope;
