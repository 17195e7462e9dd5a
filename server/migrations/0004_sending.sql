-- Sending: connections to delivery partners, invoices, their event timeline (hash-chained),
-- the outbox the delivery worker drains, and idempotency keys of send requests.

CREATE TABLE connections (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    -- 'sandbox' (simulated partner); further adapters add their own names
    partner       TEXT NOT NULL,
    name          TEXT NOT NULL,
    -- 'pending' until activated, then 'active'
    status        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    activated_at  TEXT
);

CREATE INDEX connections_tenant ON connections (tenant_id);

CREATE TABLE invoices (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL REFERENCES tenants (id),
    connection_id    TEXT,
    status           TEXT NOT NULL,
    -- BT-1 and the buyer's endpoint id as read from the document, for support and search
    document_id      TEXT,
    buyer_endpoint   TEXT,
    sha256           TEXT NOT NULL,
    -- the XML exactly as received
    payload          TEXT NOT NULL,
    validation_id    TEXT NOT NULL,
    profile          TEXT NOT NULL,
    rules_version    TEXT NOT NULL,
    -- verdict and counts, JSON
    summary          TEXT NOT NULL,
    -- findings, JSON
    findings         TEXT NOT NULL,
    -- the sandbox partner's scenario, when one was asked for
    scenario         TEXT,
    transmission_id  TEXT,
    resubmission_of  TEXT,
    environment      TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

CREATE INDEX invoices_tenant ON invoices (tenant_id, created_at);

CREATE TABLE invoice_events (
    invoice_id      TEXT NOT NULL REFERENCES invoices (id),
    seq             BIGINT NOT NULL,
    at              TEXT NOT NULL,
    -- 'invex' or the partner's name
    source          TEXT NOT NULL,
    code            TEXT NOT NULL,
    -- the invoice status this event moved to, if it moved it
    status          TEXT,
    meaning         TEXT NOT NULL,
    correlation_id  TEXT NOT NULL,
    detail          TEXT,
    -- SHA-256 of the previous entry's hash and this entry: a tamper-evident chain
    prev_hash       TEXT NOT NULL,
    hash            TEXT NOT NULL,
    PRIMARY KEY (invoice_id, seq)
);

CREATE TABLE outbox (
    invoice_id       TEXT PRIMARY KEY REFERENCES invoices (id),
    attempts         BIGINT NOT NULL,
    next_attempt_at  TEXT NOT NULL,
    -- a worker's claim; an expired claim (crashed worker) may be taken over
    claimed_until    TEXT,
    done_at          TEXT,
    last_error       TEXT
);

CREATE INDEX outbox_due ON outbox (done_at, next_attempt_at);

CREATE TABLE idempotency_keys (
    tenant_id     TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    -- SHA-256 of the route and the request body
    request_hash  TEXT NOT NULL,
    -- 'running' or 'completed'
    state         TEXT NOT NULL,
    status_code   BIGINT,
    content_type  TEXT,
    response      TEXT,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, idem_key)
);
