//! Structured environment states: terminal screens and Android UI hierarchies.

pub mod android;
pub mod terminal;
