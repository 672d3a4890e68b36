-- The audit trail (D23): one row per back-office change, written by the transaction
-- that makes the change, so there is never a change without its record nor a record of
-- a change that rolled back.
--
-- Append-only: the triggers below refuse UPDATE, DELETE and TRUNCATE for every role the
-- service connects as, so no code path (nor a mistaken statement) can rewrite history.
--
-- Kept cheap as it grows without partitions: back-office changes come by the hundred a
-- day, not the million (ten thousand a day is 36 million rows in ten years). Every read
-- is "newest first, one filter, one page": the identity key orders it, and each filter
-- has an index ending in that key, so a page is an index range scan however long the
-- trail. Time ranges use a BRIN index on the append-ordered `at`.
CREATE TABLE audit_log (
    audit_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- who: the signed-in user (id and name at the time); NULL and '' when no one was
    -- signed in (the first start's set-up, a password reset link, the command line)
    actor_id   bigint,
    actor      text NOT NULL,
    action     text NOT NULL,
    target_kind text NOT NULL,
    target_id  text NOT NULL,
    before     jsonb,
    after      jsonb,
    -- the request that made the change; NULL for the command line
    request_id text
);

CREATE INDEX audit_log_by_actor ON audit_log (actor, audit_id);
CREATE INDEX audit_log_by_action ON audit_log (action, audit_id);
CREATE INDEX audit_log_by_target ON audit_log (target_kind, target_id, audit_id);
CREATE INDEX audit_log_by_time ON audit_log USING brin (at);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only: % is refused', TG_OP;
END
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();
