#!/usr/bin/env bash
# Prepares `.device/` (git-ignored) for the device machine, which has no network and no Rust:
# the CLI built here with the CUDA backend, stripped and xz-compressed so that it fits the device
# tool's 64 MiB carry limit. Shared by tools/device/check.sh, tools/bench/gpu_h200.sh and
# tools/train/prepare_device.sh. Then run the device command with carry [".device"].
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/agentworld-target}"
cargo build --release -p agentworld-cli --features cuda
mkdir -p .device .git/info
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
strip -o .device/agentworld "$CARGO_TARGET_DIR/release/agentworld"
xz -T0 -6 -f .device/agentworld
du -sh .device/agentworld.xz
