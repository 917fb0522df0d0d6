//! Helpers shared by the CLI's integration tests: the repository root, the real binary run
//! from it, lossy text of its output, and a running `agentworld serve`.
#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    manifest_dir().join("../..")
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

/// A running `agentworld serve`; killed when dropped.
pub struct Serve {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Serve {
    /// Starts the server (batch of 8) on a free port and waits for its "listening on" line.
    pub fn start(extra: &[&str]) -> Self {
        Self::start_with(8, extra)
    }

    /// Starts the server with a decode batch of `max_batch`.
    pub fn start_with(max_batch: usize, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentworld"))
            .args([
                "serve",
                "--port",
                "0",
                "--max-batch",
                &max_batch.to_string(),
            ])
            .args(extra)
            .current_dir(repo())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("serve printed its address before exiting")
                .unwrap();
            if let Some((_, url)) = line.split_once("listening on ") {
                break url.trim().to_owned();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.by_ref() {});
        Self { child, url }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// This package's directory: `CARGO_MANIFEST_DIR` as cargo sets it when it runs the test (so a
/// test binary cached from a checkout at another path still reads this checkout's files), or
/// as it was at compile time.
fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
