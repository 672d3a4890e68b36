-- API keys, website sessions and the login-failure counters (spec part 5, D3, D6, D7).
-- Secrets are never stored: a key is kept as an HMAC-SHA-256 with the server secret,
-- a session id and its CSRF token as SHA-256 digests.

CREATE TABLE api_keys (
    key_id       text PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    name         text NOT NULL,
    key_hash     bytea NOT NULL UNIQUE,
    -- The first characters of the key, so an owner can tell keys apart.
    key_hint     text NOT NULL,
    scopes       text[] NOT NULL,
    index_codes  text[],                     -- NULL: every index the tier covers
    ip_allowlist text[] NOT NULL DEFAULT '{}', -- normalised CIDR ranges; empty: any address
    per_minute   integer CHECK (per_minute >= 0), -- NULL: the tier's limit
    per_day      integer CHECK (per_day >= 0),
    expires_at   timestamptz,
    active       boolean NOT NULL DEFAULT true,
    deleted_at   timestamptz,
    created_at   timestamptz NOT NULL
);

CREATE INDEX api_keys_owner ON api_keys (user_id) WHERE deleted_at IS NULL;

CREATE TABLE sessions (
    session_hash bytea PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    csrf_hash    bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL -- absolute end, whatever the activity
);

CREATE INDEX sessions_expiry ON sessions (expires_at);

-- Failed logins per calendar minute, by user name ('user:<name>') and client address
-- ('ip:<addr>'), shared by every instance (D6).
CREATE TABLE login_failures (
    subject  text NOT NULL,
    minute   timestamptz NOT NULL,
    failures integer NOT NULL,
    PRIMARY KEY (subject, minute)
);
