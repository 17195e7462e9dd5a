-- The files conversions were read from, so that a reviewer sees each extracted value beside
-- its source (the spreadsheet rows, the PDF page). One row per tenant and content: several
-- conversions of one upload, and uploads of the same file, share it. The content is base64
-- text: one portable schema for SQLite and PostgreSQL has no common binary column type.
CREATE TABLE conversion_inputs (
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    sha256      TEXT NOT NULL,
    file_name   TEXT,
    -- csv | xlsx | xls | ods | pdf
    format      TEXT NOT NULL,
    size_bytes  BIGINT NOT NULL,
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, sha256)
);
