-- Two-factor sign-in for staff and anyone who wants it (D23): TOTP (RFC 6238) and
-- one-time recovery codes.
--
-- The TOTP secret is never stored: it is HMAC(KEY_SECRET, "totp:" || salt), so the
-- database holds only the salt (as webhook secrets do). `totp_pending_salt` is an
-- enrolment waiting for its first code; `totp_last_step` the time step of the last code
-- accepted, so a code cannot be used twice. Recovery codes are 16 random characters,
-- stored as SHA-256 digests, each usable once.
ALTER TABLE users
    ADD COLUMN totp_salt         bytea,
    ADD COLUMN totp_pending_salt bytea,
    ADD COLUMN totp_enabled_at   timestamptz,
    ADD COLUMN totp_last_step    bigint;

-- Whether a session was opened with the second factor (or proved it when the factor was
-- set up in it): STAFF_TWO_FACTOR asks it of the session, not of the user, so a session
-- opened with the password alone never reaches the back office.
ALTER TABLE sessions ADD COLUMN second_factor boolean NOT NULL DEFAULT false;

CREATE TABLE recovery_codes (
    user_id   bigint NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);
