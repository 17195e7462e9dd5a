#!/usr/bin/env bash
# Load benchmark for POST /v1/invoice/validate (issue 4): a typical invoice, the
# peppol-bis3-sk profile, 30 s per run, with wrk (Debian package `wrk`) on this machine.
#
#   benches/load/validate.sh [DURATION] [CONNECTIONS...]      default: 30s 10 100
#   INVEX_LOAD_DELAY_MS=30 benches/load/validate.sh 30s 100    # 100 connections, each
#       pausing ~30 ms between requests: about 3,000 requests/s offered, not "as fast as
#       possible" (a closed loop of 100 connections measures queueing, not service time)
#
# Starts a release `invex serve` on 127.0.0.1:18081 with a fresh SQLite database (every
# result is stored, as in production), a bootstrap key and a rate limit high enough not to
# interfere, runs wrk with 1 thread per run (the server keeps both cores' worth of tokio
# workers; wrk shares the machine), and prints wrk's summary and a RESULT line per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION="${1:-30s}"
shift || true
CONNECTIONS=("${@:-10 100}")
[ ${#CONNECTIONS[@]} -eq 1 ] && read -r -a CONNECTIONS <<<"${CONNECTIONS[0]}"

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
cargo build --release -p invex-server --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/invex"
DATA="$(mktemp -d)"
KEY="load-test-bootstrap-key-000001"
export INVEX_LOAD_KEY="$KEY" INVEX_LOAD_DOC="${INVEX_LOAD_DOC:-examples/invoice-sk.xml}"

INVEX_SFTP_ENABLED=false INVEX_BIND=127.0.0.1:18081 INVEX_DATABASE_URL="sqlite://$DATA/invex.db?mode=rwc" \
INVEX_BOOTSTRAP_KEY="$KEY" INVEX_RATE_PER_SECOND=1000000 INVEX_RATE_BURST=1000000 \
INVEX_WATCH_RULEPACKS=false RUST_LOG=warn "$BIN" serve >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do
    curl -sf http://127.0.0.1:18081/ready >/dev/null && break
    sleep 0.1
done
# Warm-up (connections, caches, the allocator).
INVEX_LOAD_DELAY_MS= wrk -t1 -c10 -d3s -s benches/load/validate.lua http://127.0.0.1:18081 >/dev/null

for c in "${CONNECTIONS[@]}"; do
    echo "== $c connections${INVEX_LOAD_DELAY_MS:+, pause ${INVEX_LOAD_DELAY_MS} ms}, $DURATION, document $INVEX_LOAD_DOC ($(wc -c <"$INVEX_LOAD_DOC") bytes)"
    wrk -t1 -c"$c" -d"$DURATION" --latency --timeout 10s -s benches/load/validate.lua \
        http://127.0.0.1:18081
done
stored=$(curl -s -H "X-API-Key: $KEY" "http://127.0.0.1:18081/metrics" \
    | grep '^invex_validations_total' || true)
echo "== server counters"
echo "$stored"
