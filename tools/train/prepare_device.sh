#!/usr/bin/env bash
# Prepares `.device/` (git-ignored) for tools/train/gpu_h200.sh on the device machine, which has
# no network and no Rust: the CLI built here with the CUDA backend (stripped and xz-compressed, so
# that it fits the device tool's 64 MiB carry limit) and the real public states the recipe starts
# from (../shared/cases does not travel).
set -euo pipefail
cd "$(dirname "$0")/../.."
CASES=${AGENTWORLD_CASES_DIR:-../shared/cases}
bash tools/device/prepare.sh
mkdir -p .device/cases/web
rm -rf .device/cases/android .device/cases/os .device/cases/web/browsergym
cp -r "$CASES/android" "$CASES/os" .device/cases/
cp -r "$CASES/web/browsergym" .device/cases/web/
du -sh .device/agentworld.xz .device/cases
echo "ready: run 'bash tools/train/gpu_h200.sh' on the device with carry [\".device\"]"
