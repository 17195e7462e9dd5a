-- Portable SQL: the same migrations run on SQLite (embedded) and PostgreSQL (shared).
-- Timestamps are RFC 3339 UTC text, so they sort and compare the same on both.

CREATE TABLE tenants (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    -- 'operator' (runs the service, may create tenants) or 'customer'
    kind        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    name        TEXT NOT NULL,
    role        TEXT NOT NULL,
    -- looked up by prefix; only the SHA-256 of the whole key is kept
    prefix      TEXT NOT NULL UNIQUE,
    hash        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE validations (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    key_id         TEXT,
    created_at     TEXT NOT NULL,
    file_name      TEXT,
    sha256         TEXT NOT NULL,
    size_bytes     BIGINT NOT NULL,
    profile        TEXT NOT NULL,
    verdict        TEXT NOT NULL,
    rules_version  TEXT NOT NULL,
    environment    TEXT NOT NULL,
    -- the JSON result exactly as it was answered
    result         TEXT NOT NULL
);

CREATE INDEX validations_tenant ON validations (tenant_id, created_at);
