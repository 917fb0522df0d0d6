//! Structured environment states: terminal screens, Android UI hierarchies, and one common
//! tree ([`StateTree`]) that every state format is read into through a [`StateParser`].

pub mod android;
pub mod desktop;
pub mod formats;
pub mod model_form;
pub mod parser;
pub(crate) mod read;
pub mod terminal;
pub mod tree;
pub mod web_page;

pub use android::Warning;
pub use model_form::{ModelState, for_model};
pub use parser::{ParsedState, Registry, StateParser};
pub use tree::{KeyKind, NodeKey, Rect, StateNode, StateTree, TreeBuilder};
