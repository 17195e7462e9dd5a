#!/usr/bin/env bash
# Batch benchmark (issue 20): N typical invoices (default 10,000; numbered copies of
# examples/invoice-sk.xml) submitted to a release `invex serve` (sandbox, SQLite, one
# instance, the batch worker with its defaults) as an XML feed (a ZIP, the default) or a JSON
# feed (NDJSON of the JSON invoice the server itself reads from the example), its progress
# sampled while it runs, and
#   - the upload time (until the 202),
#   - the processing rate: documents / (finished_at - started_at), i.e. after the upload and
#     the split, as the issue counts it,
#   - the server's peak resident memory (VmHWM).
#
#   benches/load/batch.sh [DOCUMENTS] [zip|ndjson]
#
# Prints the progress samples and a RESULT line. Not a test: run it on a quiet machine and
# record the figures in BENCHMARKS.md with the command and the machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-10000}"
FORMAT="${2:-zip}"
cargo build --release -p invex-server --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/invex"
DATA="$(mktemp -d)"
KEY="load-test-bootstrap-key-000001"
PORT=18082

INVEX_SFTP_ENABLED=false INVEX_BIND=127.0.0.1:$PORT INVEX_DATABASE_URL="sqlite://$DATA/invex.db?mode=rwc" \
INVEX_BOOTSTRAP_KEY="$KEY" INVEX_RATE_PER_SECOND=1000000 INVEX_RATE_BURST=1000000 \
INVEX_WATCH_RULEPACKS=false INVEX_BATCHES_POLL_MS=20 \
RUST_LOG=warn "$BIN" serve >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do
    curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break
    sleep 0.1
done

if [ "$FORMAT" = ndjson ]; then
    UPLOAD="$DATA/batch.ndjson"
    TYPE=application/x-ndjson
    curl -sf -H "X-API-Key: $KEY" -H 'Content-Type: application/xml' --data-binary @examples/invoice-sk.xml \
        "http://127.0.0.1:$PORT/v1/invoice/json" >"$DATA/invoice.json"
    python3 - "$N" "$UPLOAD" "$DATA/invoice.json" <<'PY'
import json, sys
n, out, template = int(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3], encoding="utf-8"))
with open(out, "w", encoding="utf-8") as f:
    for i in range(n):
        template["number"] = f"B-{i:06}"
        f.write(json.dumps(template, ensure_ascii=False) + "\n")
PY
else
    UPLOAD="$DATA/batch.zip"
    TYPE=application/zip
    python3 - "$N" "$UPLOAD" <<'PY'
import sys, zipfile
n, out = int(sys.argv[1]), sys.argv[2]
template = open("examples/invoice-sk.xml", encoding="utf-8").read()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(n):
        z.writestr(f"invoices/B-{i:06}.xml", template.replace("<cbc:ID>FA2026-1102</cbc:ID>", f"<cbc:ID>B-{i:06}</cbc:ID>", 1))
PY
fi
echo "upload ($FORMAT): $(stat -c %s "$UPLOAD") bytes, $N documents"

start=$(date +%s.%N)
ID=$(curl -sf -H "X-API-Key: $KEY" -H "Content-Type: $TYPE" -T "$UPLOAD" -X POST \
    "http://127.0.0.1:$PORT/v1/batches" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
uploaded=$(date +%s.%N)
echo "202 after $(python3 -c "print(round($uploaded - $start, 3))") s: $ID"

while :; do
    B=$(curl -sf -H "X-API-Key: $KEY" "http://127.0.0.1:$PORT/v1/batches/$ID")
    STATUS=$(python3 -c 'import json,sys; b=json.loads(sys.argv[1]); print(b["status"]); print(b["done"], "/", b["documents"], "rate", b["rate_per_second"], "eta", b["estimated_finish"], file=sys.stderr)' "$B")
    [ "$STATUS" = completed ] || [ "$STATUS" = failed ] && break
    sleep 1
done
python3 - "$B" "$(grep VmHWM /proc/$SERVER/status | awk '{print $2}')" <<'PY'
import json, sys
from datetime import datetime
b = json.loads(sys.argv[1]); hwm_kib = int(sys.argv[2])
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
secs = (t(b["finished_at"]) - t(b["started_at"])).total_seconds()
print(f"RESULT status={b['status']} documents={b['documents']} counts={b['counts']} "
      f"processing_s={secs:.2f} docs_per_s={b['documents'] / secs:.0f} peak_rss_mib={hwm_kib / 1024:.0f}")
PY
