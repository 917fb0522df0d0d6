#!/usr/bin/env bash
# The demo recipe (`agentworld train demo`) on one H200 through the CUDA backend, in one device
# call of at most 9 minutes: issue 6's next lever, many more optimizer steps than the two CPU
# cores of the development machine allow (3,000 steps there take 73 minutes).
#
# The device machine has no network and no Rust, so prepare everything here first:
#   bash tools/train/prepare_device.sh        # CUDA binary (stripped, xz), the cases it reads
# then run it through the device tool with carry [".device"]:
#   bash tools/train/gpu_h200.sh
# Knobs (environment): STEPS (default 12000), TOKENS_PER_BATCH (default: the recipe's 2,560),
# LR (default: the recipe's), TRAIN_SECS (wall-clock budget of the training phase, default 420;
# the run stops there with a checkpoint, and the script exports nothing if it did not finish),
# EXTRA (more `train demo` flags), BACKEND (default cuda; `BACKEND=cpu TRAIN_SECS=30
# EXTRA="--rows 30 --eval-rows 1"` rehearses the whole script on a CPU in a few minutes).
# It first times 30 steps, then shrinks STEPS to what fits in TRAIN_SECS, so the run always ends
# with an exported and evaluated model. Results land in $OUT: train.log, probe.jsonl,
# model.tar (the model folder, for public/models/agentworld-demo), predictions.jsonl, gpu.txt.
set -euo pipefail
OUT=${OUT:-/tmp/agentworld-gpu-train}
mkdir -p "$OUT"
DEV=.device
if [ ! -x "$DEV/agentworld" ]; then
  [ -f "$DEV/agentworld.xz" ] || { echo "no $DEV/agentworld.xz: run tools/train/prepare_device.sh here first" >&2; exit 2; }
  xz -dk "$DEV/agentworld.xz"
  chmod +x "$DEV/agentworld"
fi
BACKEND=${BACKEND:-cuda}   # `cpu` rehearses the script on a machine without a GPU
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
else
  echo "no nvidia-smi" | tee "$OUT/gpu.txt"
fi
# cubecl compiles its kernels with NVRTC at run time; the image has it as a Python wheel.
NVRTC=$(python3 -c 'import nvidia.cuda_nvrtc, os; print(os.path.dirname(nvidia.cuda_nvrtc.__file__))' 2>/dev/null || true)
for d in ${NVRTC:+"$NVRTC/lib"} /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  if [ -d "$d" ]; then export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; fi
done
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee -a "$OUT/gpu.txt"

STEPS=${STEPS:-12000}
TRAIN_SECS=${TRAIN_SECS:-420}
FLAGS=(--backend "$BACKEND" --cases "$DEV/cases")
[ -n "${TOKENS_PER_BATCH:-}" ] && FLAGS+=(--tokens-per-batch "$TOKENS_PER_BATCH")
[ -n "${LR:-}" ] && FLAGS+=(--lr "$LR")
# shellcheck disable=SC2206
[ -n "${EXTRA:-}" ] && FLAGS+=($EXTRA)

# 1. Time 30 steps (after 10 of warm-up: the first steps compile kernels).
rm -rf /tmp/aw-time
start=$(date +%s.%N)
"$DEV/agentworld" train demo --out /tmp/aw-time/model --work /tmp/aw-time/work "${FLAGS[@]}" \
  --steps "$STEPS" --stop-after-steps 10 --probe-every 0 2>&1 | tail -3
mid=$(date +%s.%N)
"$DEV/agentworld" train demo --out /tmp/aw-time/model --work /tmp/aw-time/work "${FLAGS[@]}" \
  --steps "$STEPS" --stop-after-steps 40 --probe-every 0 --resume 2>&1 | tail -3
end=$(date +%s.%N)
PER_STEP=$(python3 -c "print(($end - $mid) / 30)")
FIT=$(python3 -c "print(int($TRAIN_SECS / max(($end - $mid) / 30, 1e-3)))")
echo "first 10 steps (data, tokenizer, kernel compiles): $(python3 -c "print(round($mid - $start, 1))") s; then $PER_STEP s/step; $FIT steps fit in $TRAIN_SECS s" | tee -a "$OUT/gpu.txt"
[ "$FIT" -lt "$STEPS" ] && STEPS=$FIT

# 2. The run itself, with the held-out probe, the export and the evaluation. It reads back the
# data and tokenizer the timing run made (--resume with no checkpoint starts at step 0).
rm -rf /tmp/aw && mkdir -p /tmp/aw/work
cp /tmp/aw-time/work/{train.jsonl,heldout.jsonl,tokenizer.json} /tmp/aw/work/
set -o pipefail
timeout 480 "$DEV/agentworld" train demo --out /tmp/aw/model --work /tmp/aw/work "${FLAGS[@]}" \
  --steps "$STEPS" --resume 2>&1 | tee "$OUT/train.log"
cp /tmp/aw/work/probe.jsonl /tmp/aw/work/predictions.jsonl "$OUT/" 2>/dev/null || true
[ -f /tmp/aw/model/model.safetensors ] && tar -C /tmp/aw -cf "$OUT/model.tar" model
ls -la "$OUT"
