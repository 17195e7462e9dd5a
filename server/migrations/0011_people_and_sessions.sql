-- People who sign in to the console: one account per e-mail address, in one tenant, with
-- one of the roles API keys have. Passwords are kept as Argon2id PHC strings only.
CREATE TABLE people (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    -- lowercase; the sign-in name
    email          TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL,
    -- NULL until the person sets one through an invitation or one-time link
    password_hash  TEXT,
    created_at     TEXT NOT NULL,
    disabled_at    TEXT
);

CREATE INDEX people_tenant_id ON people (tenant_id, id);

-- One-time links (an invitation, the first admin's sign-in): only the SHA-256 of the
-- token is kept; a link is used at most once, before it expires.
CREATE TABLE person_links (
    hash        TEXT PRIMARY KEY,
    person_id   TEXT NOT NULL REFERENCES people (id),
    -- 'invitation' or 'first-admin'
    purpose     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);

CREATE INDEX person_links_person ON person_links (person_id);

-- Console sessions, kept server-side: the cookie carries a random token, the table its
-- SHA-256, the CSRF token of its forms, and when it ends (idle and absolute).
CREATE TABLE sessions (
    hash          TEXT PRIMARY KEY,
    person_id     TEXT NOT NULL REFERENCES people (id),
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    csrf          TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    last_seen_at  TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    revoked_at    TEXT
);

CREATE INDEX sessions_person ON sessions (person_id);
