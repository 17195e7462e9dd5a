-- Webhooks (Standard Webhooks): endpoints per tenant, events, a durable delivery queue and
-- the log of every attempt. Portable SQL: booleans are BIGINT 0/1, timestamps RFC 3339 text.

CREATE TABLE webhook_endpoints (
    id                    TEXT PRIMARY KEY,
    tenant_id             TEXT NOT NULL REFERENCES tenants (id),
    url                   TEXT NOT NULL,
    description           TEXT,
    -- JSON array of event type names
    event_types           TEXT NOT NULL,
    enabled               BIGINT NOT NULL,
    -- why the server disabled it (e.g. the receiver answered 410); NULL when enabled
    disabled_reason       TEXT,
    -- the signing secret as issued (`whsec_...`): it must be kept in clear to sign, so it
    -- cannot be hashed like API keys; it is never answered again after creation/rotation
    secret                TEXT NOT NULL,
    -- the secret before the last rotation, still signing alongside until it expires
    previous_secret       TEXT,
    previous_expires_at   TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);

CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at);

CREATE TABLE webhook_events (
    -- `msg_...`: the `webhook-id` header, stable across retries and redeliveries
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    correlation_id  TEXT,
    -- the exact JSON body sent, fixed at emission so every attempt sends the same bytes
    payload         TEXT NOT NULL,
    created_at      TEXT NOT NULL
);

CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    event_id         TEXT NOT NULL REFERENCES webhook_events (id),
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id),
    tenant_id        TEXT NOT NULL,
    -- 'pending', 'delivered', 'failed' or 'cancelled'
    status           TEXT NOT NULL,
    attempts         BIGINT NOT NULL,
    next_attempt_at  TEXT NOT NULL,
    -- a worker's lease: until then no other worker takes the row; an expired lease (the
    -- instance crashed mid-attempt) makes the row due again
    claimed_until    TEXT,
    claimed_by       TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
    id              TEXT PRIMARY KEY,
    delivery_id     TEXT NOT NULL REFERENCES webhook_deliveries (id),
    endpoint_id     TEXT NOT NULL,
    tenant_id       TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    attempt         BIGINT NOT NULL,
    http_status     BIGINT,
    error           TEXT,
    duration_ms     BIGINT NOT NULL,
    correlation_id  TEXT,
    attempted_at    TEXT NOT NULL
);

CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id);
CREATE INDEX webhook_attempts_time ON webhook_attempts (attempted_at);
