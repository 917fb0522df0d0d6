//! End-to-end tests live in `tests/`; this library only locates shared test material.

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The demo model shipped in the repository.
pub fn demo_model() -> PathBuf {
    repo().join("public/models/agentworld-demo")
}
