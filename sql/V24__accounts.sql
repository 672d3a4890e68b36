-- Accounts as people expect them (D23): password reset links, the first start's set-up
-- link, and sessions that say where and in which browser they were opened.
--
-- Tokens are stored only as SHA-256 digests (they are 131 random bits: no salt needed),
-- each usable once: `used_at` is set in the transaction that uses it.

CREATE TABLE password_resets (
    token_hash bytea PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id);

-- The set-up links' tokens: each start while no super administrator exists adds one
-- (instances starting together each print their own); a link works for a day, and
-- creating the super administrator deletes them all.
CREATE TABLE setup_tokens (
    token_hash bytea PRIMARY KEY,
    created_at timestamptz NOT NULL
);

-- A session's public number (to list and end it without its secret id), and where it
-- was opened: the client's address and its browser as its User-Agent says (cut to 200
-- characters).
ALTER TABLE sessions
    ADD COLUMN session_no bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    ADD COLUMN address text,
    ADD COLUMN user_agent text;
CREATE INDEX sessions_user ON sessions (user_id);
