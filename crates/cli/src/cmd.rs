//! One module per subcommand.

pub mod bench;
pub mod data;
pub mod diff;
pub mod eval;
pub mod inspect;
pub mod parity;
pub mod parse;
pub mod rollout;
pub mod serve;
pub mod simulate;
pub mod train;
