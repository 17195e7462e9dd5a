#!/usr/bin/env python3
"""Attribute floods against the release server (issue 15): time per send as one element's
attribute count doubles (25k -> 50k -> 100k), which must stay linear (each doubling <= 2.3x).

    cargo build --release -p invex-server
    python3 benches/load/attribute_flood.py [ROUNDS]        (default 15)

Starts `invex serve` (sandbox, fresh SQLite, sandbox delivery partner connected) on a free
port, then sends the example invoice with N attributes on its first cbc:Note to
POST /v1/invoice/send, each send its own invoice number. The sizes take turns round after
round, so that whatever drifts on the machine weighs on each alike. Prints, per size, the
wall time of the request and the CPU time of the server's worker threads (where parsing,
validation and the identifier scan run): best and median, and the ratio per doubling.
Python standard library only.
"""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BIN = os.path.join(TARGET, "release", "invex")
KEY = "attribute-flood-bench-key-0000001"
SIZES = [25_000, 50_000, 100_000]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    h = {"X-API-Key": KEY}
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def worker_cpu_seconds(pid):
    """CPU time of the worker threads, in ns resolution (schedstat; user and system)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if not f.read().startswith("invex-worker"):
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            continue
    return total / 1e9


def flood(template, n, number):
    attrs = "".join(f' x{i}="flood value {i}"' for i in range(n))
    start = template.index("<cbc:ID>") + len("<cbc:ID>")
    end = template.index("</cbc:ID>", start)
    doc = template[:start] + number + template[end:]
    return doc.replace("<cbc:Note>", f"<cbc:Note{attrs}>", 1).encode()


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with open(os.path.join(ROOT, "examples", "invoice-sk.xml")) as f:
        template = f.read()
    data = tempfile.mkdtemp()
    port = free_port()
    env = dict(
        os.environ,
        INVEX_BIND=f"127.0.0.1:{port}",
        INVEX_DATABASE_URL=f"sqlite://{data}/invex.db?mode=rwc",
        INVEX_BOOTSTRAP_KEY=KEY,
        INVEX_RULEPACKS=os.path.join(ROOT, "rulepacks"),
        INVEX_WATCH_RULEPACKS="false",
        INVEX_RATE_PER_SECOND="100000",
        INVEX_RATE_BURST="100000",
        INVEX_SENDING_WORKER="false",
        RUST_LOG="warn",
    )
    log = open(os.path.join(data, "server.log"), "w")
    server = subprocess.Popen([BIN, "serve"], env=env, stdout=log, stderr=log)
    try:
        for _ in range(300):
            try:
                if request(port, "GET", "/ready")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        status, body = request(port, "POST", "/v1/connections",
                               json.dumps({"partner": "sandbox"}),
                               {"Content-Type": "application/json"})
        assert status == 201, body
        cid = json.loads(body)["id"]
        status, body = request(port, "POST", f"/v1/connections/{cid}/activate")
        assert status == 200, body
        wall = {n: [] for n in SIZES}
        cpu = {n: [] for n in SIZES}
        for r in range(-1, rounds):  # round -1 warms up and is not counted
            for n in SIZES:
                doc = flood(template, n, f"FLOOD-{n}-{r}")
                before = worker_cpu_seconds(server.pid)
                t0 = time.perf_counter()
                status, body = request(port, "POST", "/v1/invoice/send", doc, {
                    "Content-Type": "application/xml",
                    "Idempotency-Key": f"flood-{n}-{r}",
                })
                elapsed = time.perf_counter() - t0
                spent = worker_cpu_seconds(server.pid) - before
                assert status in (202, 422), (n, status, body[:300])
                if r >= 0:
                    wall[n].append(elapsed)
                    cpu[n].append(spent)
        print(f"{rounds} rounds, sizes interleaved; release build {BIN}")
        for name, series in (("request wall time", wall), ("worker CPU", cpu)):
            best = [min(series[n]) for n in SIZES]
            median = [statistics.median(series[n]) for n in SIZES]
            print(f"{name}:")
            for label, values in (("best", best), ("median", median)):
                ratios = [values[i + 1] / values[i] for i in range(len(values) - 1)]
                cells = ", ".join(f"{n // 1000}k {v * 1000:.0f} ms" for n, v in zip(SIZES, values))
                print(f"  {label:6} {cells}; per doubling "
                      + ", ".join(f"x{q:.2f}" for q in ratios))
    finally:
        server.terminate()
        server.wait()
        log.close()


if __name__ == "__main__":
    main()
