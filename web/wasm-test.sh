#!/usr/bin/env bash
# Runs web/tests/wasm.rs compiled to wasm32 under wasm-bindgen-test, in Node, with the
# wasm-bindgen-test-runner that `cargo install wasm-bindgen-cli` puts on PATH (.ci/web-tools).
set -euo pipefail
cd "$(dirname "$0")"
command -v wasm-bindgen-test-runner >/dev/null || { echo "SKIP: wasm-bindgen-test-runner is not installed (.ci/web-tools)"; exit 0; }
command -v node >/dev/null || { echo "SKIP: node is not installed (.ci/web-tools)"; exit 0; }
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test wasm "$@"
