//! Renderers of states.

pub mod page;
pub mod screen;
pub mod terminal;
pub mod tree;
