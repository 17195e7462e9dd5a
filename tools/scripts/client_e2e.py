"""The integrator's workflow through a client generated from /openapi.json.

Run by tools/scripts/client_e2e.sh, which starts the server, generates the client
(`invex_client`, openapi-python-client) and puts it on PYTHONPATH. Every call to invex goes
through the generated client's typed functions and is checked on the typed models it parses;
the only hand-written HTTP is the webhook receiver this script runs itself.

Steps: every operation of the document generated → an admin key made with the bootstrap key
(and used from then on) → validate an invoice → convert a CSV (one invoice ready, one held for
review) → a webhook endpoint pointing to the receiver → the sandbox delivery partner connected
→ the invoice sent (and the send retried with its Idempotency-Key) → `invoice.delivered`, then
`invoice.accepted`, their signatures verified → the invoice's messages and evidence.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.server
import inspect
import json
import queue
import sys
import threading
import time
from pathlib import Path

from invex_client import AuthenticatedClient
from invex_client.api.conversion import convert_invoice_v1
from invex_client.api.keys import create_key, list_keys
from invex_client.api.sending import (
    activate_connection,
    create_connection,
    get_invoice,
    get_invoice_evidence,
    list_invoice_messages,
    send_invoice_v1,
)
from invex_client.api.validation import validate_invoice_v1
from invex_client.api.webhooks import create_webhook, list_webhook_deliveries
from invex_client.models import (
    AttemptPage,
    Connection,
    ConversionStatus,
    ConvertInvoiceV1Body,
    ConvertResult,
    CreateConnection,
    CreatedKey,
    CreateKey,
    CreateWebhook,
    EventType,
    EvidencePackage,
    Invoice,
    KeyList,
    ProblemBody,
    Role,
    SendAccepted,
    Status,
    Timeline,
    ValidationResult,
    Verdict,
    WebhookInvoiceAccepted,
    WebhookInvoiceDelivered,
    WebhookWithSecret,
)
from invex_client.types import File, Unset

WEBHOOK_WAIT_SECONDS = 60
STEPS: list[str] = []


def check(condition: bool, what: str, detail: object = "") -> None:
    if not condition:
        raise AssertionError(f"{what}: {detail}")


def step(name: str) -> None:
    STEPS.append(name)
    print(f"client-e2e: {len(STEPS)}. {name}", flush=True)


def parsed(response, status: int, model: type):
    """The typed body of an answer that must have `status` and parse as `model`."""
    check(
        response.status_code == status,
        f"expected {status}",
        f"{response.status_code}: {response.content[:2000]!r}",
    )
    check(
        isinstance(response.parsed, model),
        f"the answer did not parse as {model.__name__}",
        repr(response.parsed),
    )
    return response.parsed


# --- the webhook receiver -----------------------------------------------------------------


class Receiver(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ReceiverHandler)
        self.received: queue.Queue[tuple[dict[str, str], bytes]] = queue.Queue()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hooks"


class ReceiverHandler(http.server.BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.received.put((headers, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


def verify_signature(secret: str, headers: dict[str, str], body: bytes) -> None:
    """Standard Webhooks, as docs/webhooks.md describes it."""
    check(secret.startswith("whsec_"), "the secret is whsec_-prefixed", secret[:8])
    key = base64.b64decode(secret[len("whsec_") :])
    for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
        check(name in headers, f"the webhook carries `{name}`", headers)
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [
        s.split(",", 1)[1] for s in headers["webhook-signature"].split(" ") if s.startswith("v1,")
    ]
    check(
        any(hmac.compare_digest(expected, o) for o in offered),
        "a v1 signature matches HMAC-SHA256(secret, id.timestamp.body)",
        headers["webhook-signature"],
    )
    check(
        abs(time.time() - int(headers["webhook-timestamp"])) < 300,
        "webhook-timestamp is within five minutes",
        headers["webhook-timestamp"],
    )


# --- the CSV to convert (layout of docs/conversion-template.md, the generic mapping) -----------

HEADER = [
    "Invoice number", "Issue date", "Due date", "Currency", "Buyer reference",
    "Seller name", "Seller IČO", "Seller VAT ID", "Seller street", "Seller city",
    "Seller postcode", "Seller country", "Buyer name", "Buyer VAT ID", "Buyer street",
    "Buyer city", "Buyer postcode", "Buyer country", "Payment means", "IBAN",
    "Item name", "Quantity", "Unit", "Unit price", "VAT rate",
]  # fmt: skip


def csv_row(number: str, item: str, quantity: str, price: str, iban: str) -> list[str]:
    return [
        number, "15.01.2027", "2027-01-29", "EUR", "PO-4711",
        "Dodávateľ s.r.o.", "31322832", "SK2022749619", "Hlavná 1", "Žilina", "010 01", "SK",
        "Odberateľ a.s.", "SK2020317068", "Ľubovnianska 5", "Bratislava", "851 01", "SK",
        "30", iban, item, quantity, "ks", price, "23",
    ]  # fmt: skip


def csv_text(rows: list[list[str]]) -> bytes:
    return "".join(";".join(r) + "\r\n" for r in [HEADER, *rows]).encode("utf-8")


# --- the workflow --------------------------------------------------------------------------


def every_operation_generated(openapi: Path) -> None:
    """Each operation of the document is a module of the generated client."""
    import invex_client

    api = Path(invex_client.__file__).parent / "api"
    generated = {module.stem for module in api.glob("*/*.py")}
    document = json.loads(openapi.read_text())
    operations = [
        op["operationId"]
        for item in document["paths"].values()
        for method, op in item.items()
        if method in ("get", "put", "post", "delete", "patch")
    ]
    missing = [o for o in operations if o not in generated]
    check(not missing, "operations the generated client lacks", missing)
    check(len(operations) > 40, "the document describes the API", len(operations))
    # Raw XML bodies are files (bytes), not text the client would have to encode.
    for operation in (validate_invoice_v1, send_invoice_v1):
        body = inspect.signature(operation.sync_detailed).parameters["body"].annotation
        check("File" in str(body), f"{operation.__name__} takes the XML as a File", body)


def run(base_url: str, bootstrap_key: str, examples: Path, openapi: Path) -> None:
    def client(key: str) -> AuthenticatedClient:
        # /v1 takes the key in X-API-Key (the document's `api_key` scheme).
        return AuthenticatedClient(
            base_url=base_url,
            token=key,
            prefix="",
            auth_header_name="X-API-Key",
            raise_on_unexpected_status=True,
            timeout=60.0,
        )

    invoice_xml = (examples / "invoice-sk.xml").read_bytes()

    step("every operation of /openapi.json is in the generated client")
    every_operation_generated(openapi)

    step("an admin key, made with the bootstrap key")
    with client(bootstrap_key) as bootstrap:
        created = parsed(
            create_key.sync_detailed(
                client=bootstrap, body=CreateKey(name="client-e2e integrator", role=Role.ADMIN)
            ),
            201,
            CreatedKey,
        )
    check(created.role == "admin", "the new key's role", created.role)
    check(created.name == "client-e2e integrator", "the new key's name", created.name)
    check(created.key.startswith(created.prefix), "the key starts with its prefix", created.prefix)
    check(created.key != bootstrap_key, "a new key", created.key)
    api = client(created.key)
    keys = parsed(list_keys.sync_detailed(client=api), 200, KeyList)
    check(
        created.id in [k.id for k in keys.keys],
        "the new key lists itself (the new key is in use)",
        [k.id for k in keys.keys],
    )
    # A problem document parses too: an unknown invoice is 404 problem+json.
    missing = parsed(
        get_invoice.sync_detailed("inv_client_e2e_missing", client=api), 404, ProblemBody
    )
    check(missing.status == 404 and missing.type_.endswith("not-found"), "404 problem", missing)

    step("validate an invoice")
    report = parsed(
        validate_invoice_v1.sync_detailed(
            client=api,
            body=File(payload=invoice_xml, file_name="invoice-sk.xml", mime_type="application/xml"),
        ),
        200,
        ValidationResult,
    )
    check(report.verdict == Verdict.VALID, "verdict", report.verdict)
    check(report.counts.fatal == 0, "no fatal findings", report.counts)
    check(report.environment == "sandbox", "environment", report.environment)
    check(report.id != "", "the validation is stored", report.id)
    check(report.profile.startswith("peppol-bis3"), "detected profile", report.profile)

    step("convert a CSV: one invoice ready, one held for review")
    good_iban, bad_iban = "SK3112000000198742637541", "SK3112000000198742637542"
    csv = csv_text(
        [
            csv_row("CE-1", "Konzultácie", "10", "45,50", good_iban),
            csv_row("CE-1", "Kniha", "3", "12.99", good_iban),
            csv_row("CE-2", "Servis", "1", "100", bad_iban),
        ]
    )
    converted = parsed(
        convert_invoice_v1.sync_detailed(
            client=api,
            body=ConvertInvoiceV1Body(
                file=File(payload=csv, file_name="faktury.csv", mime_type="text/csv")
            ),
        ),
        201,
        ConvertResult,
    )
    check(converted.environment == "sandbox", "environment", converted.environment)
    check(len(converted.conversions) == 2, "two invoices", converted.conversions)
    check((converted.ready, converted.needs_review) == (1, 1), "one ready, one held", converted)
    ready, held = converted.conversions
    check(ready.document_id == "CE-1", "first document", ready.document_id)
    check(ready.status == ConversionStatus.READY, "CE-1 status", ready.status)
    check(ready.input_format == "csv", "input format", ready.input_format)
    check(
        not isinstance(ready.validation, Unset)
        and ready.validation is not None
        and ready.validation.verdict == Verdict.VALID,
        "CE-1 converts to valid UBL",
        ready.validation,
    )
    check(
        isinstance(ready.xml, str) and "<cbc:ID>CE-1</cbc:ID>" in ready.xml,
        "CE-1's UBL",
        ready.xml,
    )
    check(held.document_id == "CE-2", "second document", held.document_id)
    check(held.status == ConversionStatus.NEEDS_REVIEW, "CE-2 is held", held.status)
    check(
        any("iban" in (r.field or "").lower() or "IBAN" in r.message for r in held.reasons),
        "the review reason names the IBAN",
        held.reasons,
    )

    step("a webhook endpoint pointing to the local receiver")
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = parsed(
        create_webhook.sync_detailed(
            client=api,
            body=CreateWebhook(
                url=receiver.url,
                event_types=[EventType.INVOICE_DELIVERED, EventType.INVOICE_ACCEPTED],
                description="client-e2e receiver",
            ),
        ),
        201,
        WebhookWithSecret,
    )
    check(endpoint.url == receiver.url, "endpoint url", endpoint.url)
    check(endpoint.enabled, "endpoint enabled", endpoint)
    check(
        set(endpoint.event_types) == {EventType.INVOICE_DELIVERED, EventType.INVOICE_ACCEPTED},
        "event types",
        endpoint.event_types,
    )

    step("connect the sandbox delivery partner")
    connection = parsed(
        create_connection.sync_detailed(client=api, body=CreateConnection(partner="sandbox")),
        201,
        Connection,
    )
    check(connection.partner == "sandbox", "partner", connection.partner)
    check(connection.environment == "sandbox", "environment", connection.environment)
    active = parsed(
        activate_connection.sync_detailed(connection.id, client=api),
        200,
        Connection,
    )
    check(active.id == connection.id, "the same connection", active.id)
    check(active.status == "active", "connection status", active.status)

    step("send the invoice (Idempotency-Key), then retry the send")

    def send():
        return send_invoice_v1.sync_detailed(
            client=api,
            body=File(payload=invoice_xml, file_name="invoice-sk.xml", mime_type="application/xml"),
            idempotency_key="client-e2e-send-1",
        )

    sent = parsed(send(), 202, SendAccepted)
    check(sent.status == Status.QUEUED, "queued", sent.status)
    check(sent.connection_id == connection.id, "sent through the connection", sent.connection_id)
    check(sent.document_id == "FA2026-1102", "document id", sent.document_id)
    check(sent.validation.verdict == Verdict.VALID, "validated first", sent.validation)
    check(sent.environment == "sandbox", "environment", sent.environment)
    check(sent.links.messages == f"/v1/invoices/{sent.id}/messages", "links.messages", sent.links)
    check(sent.links.evidence == f"/v1/invoices/{sent.id}/evidence", "links.evidence", sent.links)
    again = parsed(send(), 202, SendAccepted)
    check(again.id == sent.id, "the retry replays the first answer", again.id)

    step(f"wait (at most {WEBHOOK_WAIT_SECONDS} s) for invoice.accepted; verify its signature")
    deadline = time.monotonic() + WEBHOOK_WAIT_SECONDS
    seen: list[str] = []
    accepted = None
    while accepted is None:
        left = deadline - time.monotonic()
        check(left > 0, f"invoice.accepted within {WEBHOOK_WAIT_SECONDS} s", seen)
        try:
            headers, body = receiver.received.get(timeout=left)
        except queue.Empty:
            continue
        verify_signature(endpoint.secret, headers, body)
        raw = json.loads(body)
        model = {
            "invoice.delivered": WebhookInvoiceDelivered,
            "invoice.accepted": WebhookInvoiceAccepted,
        }.get(raw.get("type"))
        check(model is not None, "only the subscribed event types arrive", raw)
        event = model.from_dict(raw)
        seen.append(event.type_)
        check(event.data.invoice_id == sent.id, "the event is about the sent invoice", raw)
        if isinstance(event, WebhookInvoiceAccepted):
            accepted = (headers, event)
    headers, event = accepted
    receiver.shutdown()
    check("invoice.delivered" in seen, "invoice.delivered came first", seen)
    check(event.type_ == "invoice.accepted", "event type", event.type_)
    check(event.data.status == "accepted", "event status", event.data.status)
    check(event.data.code == "IR:AP", "buyer's Invoice Response AP", event.data.code)
    check(event.data.document_id == "FA2026-1102", "event document id", event.data.document_id)
    check(event.data.environment == "sandbox", "event environment", event.data.environment)
    check(event.data.links.evidence == sent.links.evidence, "event links", event.data.links)
    # The delivery log has the attempt, by the event id the receiver saw (written once the
    # receiver has answered: polled briefly).
    logged: list[tuple[str, str]] = []
    for _ in range(50):
        log = parsed(
            list_webhook_deliveries.sync_detailed(endpoint.id, client=api), 200, AttemptPage
        )
        logged = [(a.event_id, a.event_type) for a in log.attempts if a.http_status == 204]
        if (headers["webhook-id"], "invoice.accepted") in logged:
            break
        time.sleep(0.2)
    check(
        (headers["webhook-id"], "invoice.accepted") in logged,
        "the delivery log lists the accepted event, answered 204",
        logged,
    )

    step("the invoice's messages and evidence")
    invoice = parsed(get_invoice.sync_detailed(sent.id, client=api), 200, Invoice)
    check(invoice.status == "accepted", "invoice status", invoice.status)
    check(invoice.document_id == "FA2026-1102", "invoice document id", invoice.document_id)
    timeline = parsed(
        list_invoice_messages.sync_detailed(sent.id, client=api),
        200,
        Timeline,
    )
    check(timeline.invoice_id == sent.id, "messages of the sent invoice", timeline.invoice_id)
    codes = [e.code for e in timeline.events]
    check(codes[0] == "received" and "MLS:AB" in codes, "timeline", codes)
    check(codes[-1] == "IR:AP", "the timeline ends with the buyer's acceptance", codes)
    for previous, entry in zip(timeline.events, timeline.events[1:]):
        check(entry.prev_hash == previous.hash_, "the timeline is a hash chain", entry)
    check(timeline.chain_head == timeline.events[-1].hash_, "chain head", timeline.chain_head)
    evidence = parsed(
        get_invoice_evidence.sync_detailed(sent.id, client=api),
        200,
        EvidencePackage,
    )
    check(evidence.invoice_id == sent.id, "evidence of the sent invoice", evidence.invoice_id)
    check(evidence.status == "accepted", "evidence status", evidence.status)
    check(
        evidence.document.document_id == "FA2026-1102",
        "evidence document",
        evidence.document.document_id,
    )
    check(evidence.document.size_bytes == len(invoice_xml), "evidence size", evidence.document)
    check(evidence.transmission_id == timeline.transmission_id, "transmission", evidence)
    check(evidence.chain_head == timeline.chain_head, "the same chain", evidence.chain_head)
    check(
        [e.code for e in evidence.timeline] == codes,
        "the evidence carries the timeline",
        [e.code for e in evidence.timeline],
    )
    check(evidence.environment == "sandbox", "evidence environment", evidence.environment)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--bootstrap-key", required=True)
    parser.add_argument("--examples", required=True, type=Path)
    parser.add_argument("--openapi", required=True, type=Path)
    args = parser.parse_args()
    started = time.monotonic()
    try:
        run(args.base_url, args.bootstrap_key, args.examples, args.openapi)
    except Exception as error:  # any failure, an assertion or a parse error, fails the run
        import traceback

        traceback.print_exc()
        print(
            f"client-e2e: FAILED at step {len(STEPS)} ({STEPS[-1] if STEPS else 'start'}): "
            f"{type(error).__name__}: {error}",
            file=sys.stderr,
        )
        return 1
    print(f"client-e2e: {len(STEPS)} passed, 0 failed ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
