//! Agent actions that the world layer can interpret exactly.

pub mod android;
