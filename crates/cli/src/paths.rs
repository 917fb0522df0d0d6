//! Default locations inside a checkout of this repository.

use std::path::PathBuf;

/// The repository root this binary was built from.
pub fn repo_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Shown in messages: `/src/agentworld`, not `/src/agentworld/crates/cli/../..`.
    root.canonicalize().unwrap_or(root)
}

/// The demo model shipped in the repository (`AGENTWORLD_MODEL` overrides it).
pub fn default_model() -> PathBuf {
    std::env::var_os("AGENTWORLD_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("public/models/agentworld-demo"))
}

/// The folder of real public states (`android/`, `web/`, `os/`) training data starts from:
/// `../shared/cases` beside the repository (`AGENTWORLD_CASES_DIR` overrides it).
pub fn default_cases() -> PathBuf {
    std::env::var_os("AGENTWORLD_CASES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/cases"))
}

/// Real Android UI dumps used to make training data (`<cases>/android`).
pub fn default_android_dumps() -> PathBuf {
    default_cases().join("android")
}
