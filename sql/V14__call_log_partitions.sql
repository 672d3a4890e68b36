-- The call log, partitioned by calendar month (UTC) of `called_at`, so retention drops
-- a whole month's table instead of deleting rows one by one (a fleet writes millions of
-- rows a day; deleting them leaves as much dead space to vacuum). Writes are unchanged:
-- quota_flush still inserts its batch into `call_log`, and PostgreSQL routes each row.
--
-- Months are created ahead by `call_log_partition` (the prune job asks for this month
-- and the next every day). A row of a month that has no table yet lands in
-- `call_log_default` rather than failing; creating that month later moves such rows in.

ALTER TABLE call_log RENAME TO call_log_unpartitioned;
ALTER INDEX call_log_key RENAME TO call_log_unpartitioned_key;
ALTER INDEX call_log_age RENAME TO call_log_unpartitioned_age;

CREATE TABLE call_log (
    request_id text NOT NULL,
    key_id     text NOT NULL,
    api_name   text NOT NULL,
    code       integer NOT NULL,
    rows       integer NOT NULL,
    latency_us bigint NOT NULL,
    called_at  timestamptz NOT NULL
) PARTITION BY RANGE (called_at);

CREATE INDEX call_log_key ON call_log (key_id, called_at);
CREATE INDEX call_log_age ON call_log (called_at);

CREATE TABLE call_log_default PARTITION OF call_log DEFAULT;

-- Makes sure the month holding `p_at` (UTC) has its own table, `call_log_yYYYYmMM`,
-- moving in any rows of that month the default partition caught. Safe to call from
-- several instances at once (they queue on an advisory lock); answers whether it made one.
CREATE FUNCTION call_log_partition(p_at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    first_day timestamptz := date_trunc('month', p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    next_day  timestamptz := (date_trunc('month', p_at AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
    name      text := 'call_log_y' || to_char(p_at AT TIME ZONE 'UTC', 'YYYY"m"MM');
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('call_log_partition'));
    IF to_regclass(name) IS NOT NULL THEN
        RETURN false;
    END IF;
    CREATE TEMP TABLE IF NOT EXISTS call_log_moving (LIKE call_log) ON COMMIT DROP;
    WITH moved AS (
        DELETE FROM call_log_default WHERE called_at >= first_day AND called_at < next_day
        RETURNING *)
    INSERT INTO call_log_moving SELECT * FROM moved;
    EXECUTE format('CREATE TABLE %I PARTITION OF call_log FOR VALUES FROM (%L) TO (%L)',
                   name, first_day, next_day);
    INSERT INTO call_log SELECT * FROM call_log_moving;
    DELETE FROM call_log_moving;
    RETURN true;
END
$$;

-- Drops the months that ended before `p_before` and deletes the default partition's rows
-- older than it; answers how many months it dropped. (Counting a month's rows before
-- dropping it would read the whole month: the point of dropping is not to.)
CREATE FUNCTION call_log_expire(p_before timestamptz) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    part    record;
    dropped bigint := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('call_log_partition'));
    FOR part IN
        SELECT c.relname,
               (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz AS upper_bound
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'call_log'::regclass AND c.relname <> 'call_log_default'
    LOOP
        IF part.upper_bound <= p_before THEN
            EXECUTE format('DROP TABLE %I', part.relname);
            dropped := dropped + 1;
        END IF;
    END LOOP;
    DELETE FROM call_log_default WHERE called_at < p_before;
    RETURN dropped;
END
$$;

-- This month, the next, and every month the existing rows fall in, then the rows.
SELECT call_log_partition(now());
SELECT call_log_partition(now() + interval '1 month');
SELECT call_log_partition(m) FROM (SELECT DISTINCT date_trunc('month', called_at AT TIME ZONE 'UTC')
                                            AT TIME ZONE 'UTC' AS m
                                   FROM call_log_unpartitioned) AS months;
INSERT INTO call_log SELECT * FROM call_log_unpartitioned;
DROP TABLE call_log_unpartitioned;
