#!/usr/bin/env bash
# The GPU half of `agentworld bench` (issue 3): Qwen3.5-35B-A3B's shape with random bf16 weights
# on one H200, our CUDA backend beside transformers/PyTorch on the same GPU, one run of at most
# 8 minutes: 4096-token prefill, single-stream decode and batch-64 decode.
#
# The device machine has no network, so build the CUDA binary here first
# (`bash tools/device/prepare.sh`), then run it through the device tool with carry [".device"]:
#   bash tools/bench/gpu_h200.sh
# Results land in $OUT (bench.log, gpu.txt). Targets: single-stream decode >= 400 tok/s, half the
# H200's bandwidth bound (about 800 tok/s at 6 GB per token).
set -euo pipefail
OUT=${OUT:-/tmp/agentworld-gpu-bench}
mkdir -p "$OUT"
BIN=${AGENTWORLD_BIN:-.device/agentworld}
if [ ! -x "$BIN" ] && [ -f "$BIN.xz" ]; then xz -dkf "$BIN.xz" && chmod +x "$BIN"; fi
[ -x "$BIN" ] || { echo "no $BIN: build it first (see the top of this script)" >&2; exit 2; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
export PYTHONUNBUFFERED=1
timeout 470 "$BIN" bench --backend cuda --dtype bf16 \
  --synthetic tools/bench/qwen3_5_35b_a3b.json \
  --prompt-tokens 4096 --decode-tokens 64 --batch 64 --batch-prompt-tokens 128 --repeats 2 \
  --python python3 2>&1 | tee "$OUT/bench.log"
