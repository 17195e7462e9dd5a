#!/usr/bin/env bash
# Latency benchmark for GET /v1/vat/verify (issue 5): a release `invex serve` in production
# mode against a local VIES stub (benches/load/vies_stub.py, 30 ms per answer, 5 s for a
# hanging member state), driven by wrk (Debian package `wrk`) at a paced rate.
#
#   benches/load/vat.sh [DURATION]        default 20s
#
# Runs: locally rejected numbers and cached answers at ~1,000 requests/s (11 connections,
# each pausing ~10 ms); numbers never seen before (every request asks the stub) at ~200/s;
# the hanging number with a 1,000 ms register budget and the circuit breaker disabled
# (every request waits for the budget: the worst case). Prints a RESULT line per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION="${1:-20s}"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
cargo build --release -p invex-server --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/invex"
DATA="$(mktemp -d)"
KEY="load-test-bootstrap-key-000001"
export INVEX_LOAD_KEY="$KEY"
python3 benches/load/vies_stub.py 18092 &
STUB=$!
INVEX_MODE=production INVEX_BIND=127.0.0.1:18082 INVEX_DATABASE_URL="sqlite://$DATA/invex.db?mode=rwc" \
INVEX_BOOTSTRAP_KEY="$KEY" INVEX_RATE_PER_SECOND=1000000 INVEX_RATE_BURST=1000000 \
INVEX_WATCH_RULEPACKS=false INVEX_VIES_URL=http://127.0.0.1:18092 INVEX_REGISTER_TIMEOUT_MS=1000 \
INVEX_VAT_BREAKER_FAILURES=1000000000 RUST_LOG=error "$BIN" serve >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill -TERM $SERVER $STUB 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do
    curl -sf http://127.0.0.1:18082/ready >/dev/null && break
    sleep 0.1
done
URL=http://127.0.0.1:18082
# Fill the cache with the numbers of the `cached` set, and warm up.
for vat in $(grep -o '"SK[0-9]*"' benches/load/vat.lua | head -20 | tr -d '"'); do
    curl -sf -H "X-API-Key: $KEY" "$URL/v1/vat/verify?vat=$vat" >/dev/null
done
INVEX_LOAD_SET=rejected wrk -t1 -c4 -d2s -s benches/load/vat.lua "$URL" >/dev/null

run() { # set connections pause_ms duration
    echo "== $1: $2 connections, pause ~$3 ms, $4"
    INVEX_LOAD_SET=$1 INVEX_LOAD_DELAY_MS=$3 wrk -t1 -c"$2" -d"$4" --latency --timeout 10s \
        -s benches/load/vat.lua "$URL" | grep -E 'RESULT|Requests/sec'
}
run rejected 11 10 "$DURATION"
run cached 11 10 "$DURATION"
run uncached 8 40 "$DURATION"
run slow 20 10 10s
echo "== metered calls"
curl -s -H "X-API-Key: $KEY" "$URL/v1/usage"; echo
