//! End-to-end tests live in `tests/`; this library only locates shared test material.

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    manifest_dir().join("..")
}

/// The demo model shipped in the repository.
pub fn demo_model() -> PathBuf {
    repo().join("public/models/agentworld-demo")
}

/// This package's directory: `CARGO_MANIFEST_DIR` as cargo sets it when it runs the test (so a
/// test binary cached from a checkout at another path still reads this checkout's files), or
/// as it was at compile time.
fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
