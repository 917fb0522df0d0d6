//! Helpers shared by the CLI's integration tests: the repository root, the real binary run
//! from it, and lossy text of its output.
#![allow(dead_code)] // each test file uses its own subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `agentworld ARGS` from the repository root and waits for it.
pub fn agentworld(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentworld"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

/// Bytes of stdout or stderr as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
