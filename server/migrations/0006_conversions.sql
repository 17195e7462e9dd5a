-- Conversions of CSV, Excel and PDF input into UBL: the extracted draft with confidences,
-- the generated XML, its validation, why it needs review, and the review trail.
CREATE TABLE conversions (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id),
    -- one upload can hold several invoices: they share a batch id
    batch_id        TEXT NOT NULL,
    position        BIGINT NOT NULL,
    -- ready | needs_review | approved | rejected | sent
    status          TEXT NOT NULL,
    file_name       TEXT,
    -- csv | xlsx | xls | ods | pdf
    input_format    TEXT NOT NULL,
    input_sha256    TEXT NOT NULL,
    document_id     TEXT,
    -- the Draft (JSON), the generated UBL and its SHA-256 (send refuses unapproved ones)
    draft           TEXT NOT NULL,
    xml             TEXT NOT NULL,
    xml_sha256      TEXT NOT NULL,
    -- the validation report of the XML (JSON)
    report          TEXT NOT NULL,
    confidence      DOUBLE PRECISION NOT NULL,
    -- review reasons and cross-checks (JSON arrays)
    reasons         TEXT NOT NULL,
    cross_checks    TEXT NOT NULL,
    -- corrections as they were made (JSON array of {at, by, path, old, new})
    changes         TEXT NOT NULL,
    -- 0 | 1: whether the gate held it (approval metadata then travels with the invoice)
    needed_review   BIGINT NOT NULL,
    approved_by     TEXT,
    approved_at     TEXT,
    review_note     TEXT,
    invoice_id      TEXT,
    environment     TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE INDEX conversions_tenant_status ON conversions (tenant_id, status, created_at);
CREATE INDEX conversions_xml ON conversions (tenant_id, xml_sha256);
CREATE INDEX conversions_batch ON conversions (batch_id, position);
