//! Locating the shared, read-only test material (`../shared/cases` beside the repository).

use std::path::PathBuf;

/// The shared cases folder: `$AGENTWORLD_CASES_DIR`, else `<repo>/../shared/cases`.
pub fn cases_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGENTWORLD_CASES_DIR") {
        return PathBuf::from(dir);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases");
    assert!(
        dir.is_dir(),
        "shared test cases not found at {} (set AGENTWORLD_CASES_DIR)",
        dir.display()
    );
    dir
}

/// Reads a file under the cases folder as UTF-8.
#[allow(dead_code)]
pub fn read_case(rel: &str) -> String {
    let path = cases_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Reads a file under the cases folder as bytes.
#[allow(dead_code)]
pub fn read_case_bytes(rel: &str) -> Vec<u8> {
    let path = cases_dir().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}
