-- Key quotas (spec part 8, D6) shared by every instance, and the call log.
--
-- Each instance serves calls from budget it has leased in memory. A window row holds
-- `granted`: all budget handed out to instances and not given back. `granted` never
-- exceeds the limit the lease was asked under, so the calls admitted across all
-- instances never do either. `used` is what instances report they actually spent; it
-- lags by one flush and is what the back office shows.

CREATE TABLE quota_windows (
    key_id       text NOT NULL REFERENCES api_keys (key_id) ON DELETE CASCADE,
    -- 'day' sorts before 'minute': every statement locks one key's rows in
    -- (key_id, span, window_start) order, so leases and flushes cannot deadlock.
    span         text NOT NULL CHECK (span IN ('day', 'minute')),
    window_start timestamptz NOT NULL,
    granted      bigint NOT NULL DEFAULT 0 CHECK (granted >= 0),
    used         bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (key_id, span, window_start)
);

CREATE INDEX quota_windows_age ON quota_windows (span, window_start);

-- One lease statement for one key: for each window, first give back `p_returns[i]`
-- (budget taken under a limit that has since changed), then take up to `p_wants[i]`
-- without passing `p_limits[i]`. Answers, per window, what was taken and the window's
-- new total, from which the instance estimates how far the key is from its limit.
CREATE FUNCTION quota_lease(
    p_key_id  text,
    p_spans   text[],
    p_starts  timestamptz[],
    p_wants   bigint[],
    p_limits  bigint[],
    p_returns bigint[]
) RETURNS TABLE (lease_span text, lease_taken bigint, lease_granted bigint)
LANGUAGE plpgsql AS $$
DECLARE
    i       integer;
    current bigint;
    taken   bigint;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_spans, 1), 0) LOOP
        INSERT INTO quota_windows (key_id, span, window_start)
        VALUES (p_key_id, p_spans[i], p_starts[i])
        ON CONFLICT DO NOTHING;
        SELECT granted INTO current FROM quota_windows
        WHERE key_id = p_key_id AND span = p_spans[i] AND window_start = p_starts[i]
        FOR UPDATE;
        current := greatest(0, current - p_returns[i]);
        taken := least(p_wants[i], greatest(0, p_limits[i] - current));
        UPDATE quota_windows SET granted = current + taken
        WHERE key_id = p_key_id AND span = p_spans[i] AND window_start = p_starts[i];
        lease_span := p_spans[i];
        lease_taken := taken;
        lease_granted := current + taken;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Flushes already applied, so a flush retried after a lost reply is not applied twice
-- (a doubled give-back would let the instances admit more than the limit).
CREATE TABLE quota_flushes (
    instance_id bigint NOT NULL,
    seq         bigint NOT NULL,
    flushed_at  timestamptz NOT NULL,
    PRIMARY KEY (instance_id, seq)
);

-- Every counted call (spec part 8 rule 3): calls that passed steps 1-6 and step 7.
CREATE TABLE call_log (
    request_id text NOT NULL,
    key_id     text NOT NULL,
    api_name   text NOT NULL,
    code       integer NOT NULL,
    rows       integer NOT NULL,
    latency_us bigint NOT NULL,
    called_at  timestamptz NOT NULL
);

CREATE INDEX call_log_key ON call_log (key_id, called_at);
CREATE INDEX call_log_age ON call_log (called_at);

-- One flush statement for one instance: spent calls and given-back budget per window
-- (rows sorted by key_id, span, window_start), then the call-log rows. Answers false
-- when this (instance, seq) was applied before.
CREATE FUNCTION quota_flush(
    p_instance_id bigint,
    p_seq         bigint,
    p_now         timestamptz,
    p_key_ids     text[],
    p_spans       text[],
    p_starts      timestamptz[],
    p_used        bigint[],
    p_returns     bigint[],
    l_request_ids text[],
    l_key_ids     text[],
    l_api_names   text[],
    l_codes       integer[],
    l_rows        integer[],
    l_latency_us  bigint[],
    l_called_at   timestamptz[]
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    i integer;
BEGIN
    INSERT INTO quota_flushes VALUES (p_instance_id, p_seq, p_now) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_key_ids, 1), 0) LOOP
        UPDATE quota_windows
        SET used = used + p_used[i], granted = greatest(0, granted - p_returns[i])
        WHERE key_id = p_key_ids[i] AND span = p_spans[i] AND window_start = p_starts[i];
    END LOOP;
    INSERT INTO call_log (request_id, key_id, api_name, code, rows, latency_us, called_at)
    SELECT * FROM unnest(l_request_ids, l_key_ids, l_api_names, l_codes, l_rows,
                         l_latency_us, l_called_at);
    RETURN true;
END
$$;
