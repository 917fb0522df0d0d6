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
# LR (default: the recipe's), TRAIN_SECS (what the training phase may take, default 330 s),
# EVAL_SECS (export and evaluation after it, default 120 s), EVAL_ROWS (held-out rows per domain
# evaluated there, default 25: re-measure the returned model here with `eval fidelity`), EXTRA
# (more `train demo` flags, other than those the script sets: --steps, --stop-after-steps,
# --resume, --backend, --lr, --tokens-per-batch, --eval-rows, --probe-every), BACKEND (default
# cuda; `BACKEND=cpu TRAIN_SECS=30 MIN_STEPS=5 EVAL_ROWS=1 EXTRA="--rows 30 --copy-stages none"`
# rehearses the whole script on a CPU in a few minutes), MIN_STEPS (fewer fitting steps than this,
# default 100, and the script stops before the run).
# It first times steps 25-50 of a short run, then lowers STEPS to what fits in TRAIN_SECS (with a
# 20% margin: the timed steps are copy-stage ones). Whatever happens, what exists comes back in
# $OUT: gpu.txt, time.log, train.log, probe.jsonl, predictions.jsonl, model.tar (the model
# folder, for public/models/agentworld-demo). Total: about 1 + (TRAIN_SECS + EVAL_SECS) / 60 min.
set -euo pipefail
OUT=${OUT:-/tmp/agentworld-gpu-train}
mkdir -p "$OUT"
DEV=.device
BIN=/tmp/agentworld-bin
if [ ! -x "$BIN" ]; then
  [ -f "$DEV/agentworld.xz" ] || { echo "no $DEV/agentworld.xz: run tools/train/prepare_device.sh here first" >&2; exit 2; }
  xz -dc "$DEV/agentworld.xz" > "$BIN"
  chmod +x "$BIN"
fi
BACKEND=${BACKEND:-cuda}   # `cpu` rehearses the script on a machine without a GPU
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt" || true
else
  echo "no nvidia-smi" | tee "$OUT/gpu.txt"
fi
# cubecl compiles its kernels with NVRTC at run time; the image has it as a Python wheel.
NVRTC=$(python3 -c 'import nvidia.cuda_nvrtc, os; print(os.path.dirname(nvidia.cuda_nvrtc.__file__))' 2>/dev/null || true)
for d in ${NVRTC:+"$NVRTC/lib"} /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  if [ -d "$d" ]; then export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; fi
done
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" | tee -a "$OUT/gpu.txt"

STEPS=${STEPS:-12000}
TRAIN_SECS=${TRAIN_SECS:-330}
EVAL_SECS=${EVAL_SECS:-120}
FLAGS=(--backend "$BACKEND" --cases "$DEV/cases")
[ -n "${TOKENS_PER_BATCH:-}" ] && FLAGS+=(--tokens-per-batch "$TOKENS_PER_BATCH")
[ -n "${LR:-}" ] && FLAGS+=(--lr "$LR")
# shellcheck disable=SC2206
[ -n "${EXTRA:-}" ] && FLAGS+=($EXTRA)

# 1. Time steps 25-50 of a short run (the first steps also compile kernels). It makes the data
# and tokenizer the run itself reads back.
rm -rf /tmp/aw-time
rc=0
"$BIN" train demo --out /tmp/aw-time/model --work /tmp/aw-time/work "${FLAGS[@]}" \
  --steps 1000 --stop-after-steps 51 --probe-every 0 > "$OUT/time.log" 2>&1 || rc=$?
tail -4 "$OUT/time.log"
[ "$rc" = 0 ] || { echo "the timing run failed (exit $rc); see time.log" >&2; exit 3; }
at() { grep -E "^step +$1 " "$OUT/time.log" | awk '{print $NF}' | tr -d s; }
PER_STEP=$(python3 -c "print(round(max(($(at 50) - $(at 25)) / 25, 1e-4), 4))")
FIT=$(python3 -c "print(int(0.8 * $TRAIN_SECS / $PER_STEP))")
echo "$PER_STEP s a step; $FIT steps fit in $TRAIN_SECS s" | tee -a "$OUT/gpu.txt"
MIN_STEPS=${MIN_STEPS:-100}
if [ "$FIT" -lt "$MIN_STEPS" ]; then
  echo "fewer than $MIN_STEPS steps (MIN_STEPS) fit in TRAIN_SECS=$TRAIN_SECS; nothing worth training" >&2
  exit 3
fi
[ "$FIT" -lt "$STEPS" ] && STEPS=$FIT

# 2. The run itself, with the held-out probe, the export and the evaluation. It reads back the
# data and tokenizer the timing run made (--resume with no checkpoint starts at step 0).
rm -rf /tmp/aw && mkdir -p /tmp/aw/work
cp /tmp/aw-time/work/{train.jsonl,heldout.jsonl,tokenizer.json} /tmp/aw/work/
rc=0
timeout $((TRAIN_SECS + EVAL_SECS)) "$BIN" train demo --out /tmp/aw/model --work /tmp/aw/work \
  "${FLAGS[@]}" --steps "$STEPS" --eval-rows "${EVAL_ROWS:-25}" --resume > "$OUT/train.log" 2>&1 || rc=$?
tail -12 "$OUT/train.log"
[ "$rc" = 0 ] || echo "the run ended with exit $rc (124: past TRAIN_SECS + EVAL_SECS); returning what exists" >&2
cp /tmp/aw/work/probe.jsonl /tmp/aw/work/predictions.jsonl "$OUT/" 2>/dev/null || true
if [ -f /tmp/aw/model/model.safetensors ]; then tar -C /tmp/aw -cf "$OUT/model.tar" model; fi
ls -la "$OUT"
exit "$rc"
