#!/usr/bin/env bash
# The integrator's workflow, driven by a client generated from the running server's
# /openapi.json (sandbox mode, embedded SQLite):
#   1. openapi-python-client generates a Python client from the document the server serves
#      (every operation must be generated: an operation left out fails the run);
#   2. tools/scripts/client_e2e.py drives, through the generated client's typed functions only,
#      key → validate → convert → webhook endpoint → connection → send → the invoice.accepted
#      webhook (received by a local receiver, signature verified) → messages and evidence.
#
#   tools/scripts/client_e2e.sh path/to/invex
#
# The generator is installed from PyPI into a virtualenv (CLIENT_E2E_VENV) at a pinned version.
set -euo pipefail

bin=$(realpath "${1:?usage: tools/scripts/client_e2e.sh path/to/invex}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${CLIENT_E2E_VENV:-$HOME/.cache/invex/client-e2e-venv}
if ! "$venv/bin/python" -c 'import openapi_python_client, dateutil, httpx, attrs' 2>/dev/null; then
    python3 -m venv "$venv"
    # python-dateutil: the generated client parses date-times with it.
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        openapi-python-client==0.29.1 python-dateutil==2.9.0.post0
fi

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
key=client-e2e-bootstrap-key-000000000001
# Webhooks: the sandbox calls `http://127.0.0.1:<port>` (a literal loopback address) without
# further settings; nothing else on loopback is reachable. The sandbox buyer answers after
# 200 ms and the workers poll every 100 ms, so that the run takes seconds.
INVEX_BIND=127.0.0.1:$port INVEX_SFTP_BIND=127.0.0.1:0 \
INVEX_MODE=sandbox \
INVEX_DATABASE_URL="sqlite://$dir/invex.db?mode=rwc" \
INVEX_RULEPACKS="$root/rulepacks" \
INVEX_WATCH_RULEPACKS=false \
INVEX_BOOTSTRAP_KEY=$key \
INVEX_SENDING_POLL_MS=100 \
INVEX_SENDING_SANDBOX_RESPONSE_DELAY_MS=200 \
INVEX_WEBHOOKS_POLL_INTERVAL_MS=100 \
RUST_LOG=error \
    "$bin" serve > "$dir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT

for _ in $(seq 1 600); do
    if curl -fs "http://127.0.0.1:$port/ready" > /dev/null 2>&1; then break; fi
    if ! kill -0 $server 2>/dev/null; then cat "$dir/server.log"; exit 1; fi
    sleep 0.2
done
curl -fs "http://127.0.0.1:$port/ready" > /dev/null

curl -fs "http://127.0.0.1:$port/openapi.json" -o "$dir/openapi.json"
# openapi-python-client sends only JSON, forms, multipart and application/octet-stream bodies;
# its documented content_type_overrides lets it send the raw XML bodies (declared as binary
# strings) as bytes, with their own Content-Type.
cat > "$dir/generator.yaml" <<'YAML'
project_name_override: invex-client
package_name_override: invex_client
content_type_overrides:
  application/xml: application/octet-stream
  text/xml: application/octet-stream
YAML
# ruff (installed with the generator) formats the generated code.
if ! PATH="$venv/bin:$PATH" "$venv/bin/openapi-python-client" generate \
        --path "$dir/openapi.json" --config "$dir/generator.yaml" \
        --meta none --output-path "$dir/invex_client" > "$dir/generate.log" 2>&1; then
    cat "$dir/generate.log"
    echo "client-e2e: openapi-python-client could not generate a client" >&2
    exit 1
fi
# The generator warns about each response it leaves untyped: binary downloads (PDF, XLSX,
# ZIP) are, and stay available as bytes. Any other warning (an operation left out, a body
# without a schema or of a type it cannot send) is a defect of the document: the run fails.
warnings=$(grep -c '^WARNING' "$dir/generate.log" || true)
omitted=$(grep -c 'response will be omitted from generated client' "$dir/generate.log" || true)
if [ "$warnings" != "$omitted" ]; then
    cat "$dir/generate.log"
    echo "client-e2e: openapi-python-client could not use parts of the document (see above)" >&2
    exit 1
fi

if ! PYTHONPATH="$dir" "$venv/bin/python" "$here/client_e2e.py" \
        --base-url "http://127.0.0.1:$port" --bootstrap-key "$key" \
        --examples "$root/examples" --openapi "$dir/openapi.json"; then
    echo "--- server log" >&2
    tail -n 50 "$dir/server.log" >&2
    exit 1
fi
# The server survived all of it.
curl -fs "http://127.0.0.1:$port/health" > /dev/null
