-- Single sign-on for the console (OpenID Connect, authorization code with PKCE). Portable
-- SQL: booleans are BIGINT 0/1, timestamps RFC 3339 text.

-- A tenant's OpenID provider. The client secret is kept as given: it is presented to the
-- provider's token endpoint, so it cannot be kept as a hash (as webhook signing secrets).
CREATE TABLE tenant_sso (
    tenant_id      TEXT PRIMARY KEY REFERENCES tenants (id),
    issuer         TEXT NOT NULL,
    client_id      TEXT NOT NULL,
    client_secret  TEXT,
    -- asked for besides `openid`, space-separated
    scopes         TEXT NOT NULL,
    -- the claim whose values map to roles (string or array of strings)
    role_claim     TEXT NOT NULL,
    -- JSON array of [claim value, role] pairs, in the administrator's order
    role_map       TEXT NOT NULL,
    -- the role of a person none of whose values maps; NULL refuses them
    default_role   TEXT,
    -- 1: people of the tenant sign in through the provider only
    required       BIGINT NOT NULL,
    updated_at     TEXT NOT NULL,
    updated_by     TEXT NOT NULL
);

-- The e-mail domains whose people sign in through a tenant's provider: a domain leads to one
-- tenant, and only addresses under the tenant's domains get accounts from its provider.
CREATE TABLE sso_domains (
    domain     TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id)
);

CREATE INDEX sso_domains_tenant ON sso_domains (tenant_id);

-- Sign-ins under way: the SHA-256 of the `state` the browser carries (in the URL and in a
-- cookie), with the nonce and PKCE verifier that only the server knows; used at most once.
CREATE TABLE sso_attempts (
    hash        TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    nonce       TEXT NOT NULL,
    verifier    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);

CREATE INDEX sso_attempts_expiry ON sso_attempts (expires_at);

-- Who a person is at a provider: the issuer and its subject identifier (stable, unlike the
-- e-mail address), bound to one person on the first sign-in.
CREATE TABLE person_identities (
    issuer      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    person_id   TEXT NOT NULL REFERENCES people (id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);

CREATE INDEX person_identities_person ON person_identities (person_id);

-- How a session was opened: password, link or sso (a tenant may require sso only from an
-- administrator who has just signed in that way).
ALTER TABLE sessions ADD COLUMN method TEXT NOT NULL DEFAULT 'password';
