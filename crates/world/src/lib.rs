#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod action;
pub mod bench;
pub mod diff;
pub mod domain;
pub mod env;
pub mod error;
pub mod messages;
pub mod prompts;
pub mod row;
pub mod state;

pub use domain::Domain;
pub use env::{Act, EnvConfig, Step, Task, WorldEnv};
pub use error::{Error, Result};
pub use messages::{History, Message, Role, Turn, TurnAction};
pub use prompts::PromptSet;
pub use row::{Row, Split};
