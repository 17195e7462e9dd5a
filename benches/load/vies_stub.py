#!/usr/bin/env python3
"""A local VIES REST stub for the VAT load benchmark (benches/load/vat.sh).

POST /check-vat-number {countryCode, vatNumber} answers like VIES after
STUB_DELAY_MS milliseconds (default 30, roughly VIES from inside the EU); the
national number 1020304758 answers after 5 s (a hanging member state). Every other
number is valid. Not a test double for the test suite: the Rust tests run their own
stubs in-process.
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DELAY = float(os.environ.get("STUB_DELAY_MS", "30")) / 1000.0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without this, Nagle and delayed ACKs
    # add ~40 ms to every answer.
    disable_nagle_algorithm = True

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        number = body.get("vatNumber", "")
        time.sleep(5.0 if number == "1020304758" else DELAY)
        answer = json.dumps({
            "countryCode": body.get("countryCode", ""),
            "vatNumber": number,
            "requestDate": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "valid": True,
            "name": "LOAD TEST s.r.o.",
            "address": "Hlavná 1, 811 01 Bratislava",
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()
