#!/usr/bin/env bash
# Builds the in-browser engine (web/worker) into OUT_DIR/worker: cargo for wasm32, then the
# wasm-bindgen on PATH (--target web, loaded by web/worker.js in a module worker).
# trunk runs it after each build when AGENTWORLD_WEB_WORKER=1 (Trunk.toml); it is off by
# default because it compiles burn for wasm32 (about 20 minutes cold on two cores).
#
# usage: web/worker/build.sh OUT_DIR [--release]
set -euo pipefail
OUT="${1:?usage: build.sh OUT_DIR [--release]}"
cd "$(dirname "$0")"
PROFILE=debug
ARGS=()
if [ "${2:-}" = "--release" ]; then PROFILE=release; ARGS=(--release); fi
cargo build --target wasm32-unknown-unknown -p agentworld-worker "${ARGS[@]}"
TARGET="${CARGO_TARGET_DIR:-$(cd .. && pwd)/target}"
mkdir -p "$OUT/worker"
wasm-bindgen --target web --no-typescript --out-dir "$OUT/worker" \
  "$TARGET/wasm32-unknown-unknown/$PROFILE/agentworld_worker.wasm"
