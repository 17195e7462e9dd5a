-- SFTP drop folders (issue 20). Portable SQL: booleans are BIGINT 0/1, timestamps RFC 3339
-- text.

-- What a batch was made from, when a file of known name and kind: `document` (one UBL or
-- JSON invoice, the whole file), `zip`, `ndjson`. NULL: an HTTP upload, read as its first
-- bytes say. 1 in keep_input: the upload's pieces stay after the split (an SFTP file is
-- readable in archive/ afterwards).
ALTER TABLE batches ADD COLUMN input_name TEXT;
ALTER TABLE batches ADD COLUMN input_kind TEXT;
ALTER TABLE batches ADD COLUMN keep_input BIGINT NOT NULL DEFAULT 0;

-- An account of a tenant's SFTP drop folder. The user name is the id. Public keys are not
-- secrets: kept as given (OpenSSH lines), one per line.
CREATE TABLE sftp_accounts (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id),
    name         TEXT NOT NULL,
    role         TEXT NOT NULL,
    public_keys  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT
);
CREATE INDEX sftp_accounts_tenant ON sftp_accounts (tenant_id, id);

-- Each file an account delivered to inbox/, once per content (SHA-256): the same bytes
-- again are the same submission. The batch made of it carries its outcome.
CREATE TABLE sftp_files (
    account_id   TEXT NOT NULL REFERENCES sftp_accounts (id),
    sha256       TEXT NOT NULL,
    name         TEXT NOT NULL,
    size_bytes   BIGINT NOT NULL,
    batch_id     TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    PRIMARY KEY (account_id, sha256)
);
CREATE INDEX sftp_files_received ON sftp_files (account_id, received_at);

-- The server's SSH host key (OpenSSH private key format), made on first start and shared by
-- every instance on the database, so that clients see one host key.
CREATE TABLE sftp_host_keys (
    id           TEXT PRIMARY KEY,
    private_key  TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
