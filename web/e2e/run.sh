#!/usr/bin/env bash
# Builds the playground, starts `agentworld serve` on the demo model with it, and runs the
# browser test (e2e.mjs) in headless Chromium. Prints SKIP and exits 0 when Chromium, node or
# the trunk toolchain cannot be had; any failed check exits non-zero.
#
# usage: web/e2e/run.sh [OUT_DIR]     (default OUT_DIR: $CARGO_TARGET_DIR/web-e2e)
# WEB_CARGO_TARGET_DIR, when set, is the target folder of the wasm build (default: the same).
# The in-browser engine (web/worker) is built and tested too unless AGENTWORLD_WEB_WORKER=0.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
OUT="${1:-$TARGET/web-e2e}"
skip() { echo "SKIP web e2e: $*"; exit 0; }

command -v node >/dev/null || skip "node is not installed (apt-get install nodejs npm)"
CHROMIUM="${CHROMIUM:-$(command -v chromium || true)}"
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium)"
export CHROMIUM
[ -d web/e2e/node_modules/playwright-core ] || (cd web/e2e && npm ci --no-audit --no-fund) \
  || skip "cannot install playwright-core from npm"
command -v trunk >/dev/null || skip "trunk is not installed (.ci/web installs it)"

echo "== trunk build (offline)"
export AGENTWORLD_WEB_WORKER="${AGENTWORLD_WEB_WORKER:-1}"
(cd web && CARGO_TARGET_DIR="${WEB_CARGO_TARGET_DIR:-$TARGET}" trunk build --offline)

echo "== agentworld serve"
cargo build -p agentworld-cli
LOG="$(mktemp)"
"$TARGET/debug/agentworld" serve --port 0 --web-dir web/dist 2>"$LOG" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 120); do
  URL="$(grep -o 'listening on http://[0-9.:]*' "$LOG" | sed 's/listening on //' || true)"
  [ -n "$URL" ] && break
  kill -0 $SERVER 2>/dev/null || { cat "$LOG"; echo "agentworld serve exited"; exit 1; }
  sleep 1
done
[ -n "$URL" ] || { cat "$LOG"; echo "agentworld serve did not start"; exit 1; }
echo "serving $URL"

echo "== browser test"
node web/e2e/e2e.mjs "$URL" "$OUT"
