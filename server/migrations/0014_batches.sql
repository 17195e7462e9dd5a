-- Batches: a large upload (a ZIP of documents) stored as it arrives and answered at once,
-- then split into its documents and processed by workers that claim documents with leases
-- (several instances share one batch; a crash resumes where it stopped). Portable SQL:
-- timestamps RFC 3339 text, binary content base64 text.
CREATE TABLE batches (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id),
    environment     TEXT NOT NULL,
    -- what is done with each document: validate
    mode            TEXT NOT NULL,
    -- the profile asked for; NULL: detected per document
    profile         TEXT,
    -- the day whose rules apply (YYYY-MM-DD)
    rules_at        TEXT NOT NULL,
    input_sha256    TEXT NOT NULL,
    input_bytes     BIGINT NOT NULL,
    -- uploading | received | processing | completed | failed
    status          TEXT NOT NULL,
    -- known once split
    documents       BIGINT NOT NULL,
    done            BIGINT NOT NULL,
    error           TEXT,
    -- the lease of the worker splitting it
    claimed_by      TEXT,
    claimed_until   TEXT,
    idempotency_key TEXT,
    created_at      TEXT NOT NULL,
    started_at      TEXT,
    finished_at     TEXT
);

CREATE UNIQUE INDEX batches_idempotency ON batches (tenant_id, idempotency_key);
CREATE INDEX batches_status ON batches (status, claimed_until);
CREATE INDEX batches_tenant ON batches (tenant_id, id);

-- The upload as it arrived, in pieces of at most 1 MiB, until it is split.
CREATE TABLE batch_chunks (
    batch_id  TEXT NOT NULL REFERENCES batches (id),
    n         BIGINT NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (batch_id, n)
);

-- One row per document of a batch: its content until processed, then its outcome.
CREATE TABLE batch_documents (
    batch_id       TEXT NOT NULL REFERENCES batches (id),
    seq            BIGINT NOT NULL,
    name           TEXT NOT NULL,
    size_bytes     BIGINT NOT NULL,
    sha256         TEXT NOT NULL,
    content        TEXT,
    claimed_by     TEXT,
    claimed_until  TEXT,
    -- how many times a worker claimed it (1 unless a worker died holding it)
    attempts       BIGINT NOT NULL,
    -- NULL while pending; valid | invalid | failed
    outcome        TEXT,
    -- the validation report, or the problem that kept it from being validated (JSON)
    result         TEXT,
    finished_at    TEXT,
    PRIMARY KEY (batch_id, seq)
);

CREATE INDEX batch_documents_pending ON batch_documents (outcome, claimed_until);
