-- Leases that come back from instances that stopped, and accounting a crash can only
-- over-count.
--
-- Each instance proves it is alive: every quota statement it runs renews its row of
-- `quota_instances` until `expires_at` (now + the instance's QUOTA_LEASE_TTL_MS). The
-- instance itself stops spending its leases a tenth of the TTL before that (it counts
-- from when it sent the statement, so the database's expiry is always later). Once the
-- row has expired, any instance's `quota_reclaim()` marks it reclaimed and gives its
-- day budget back; from then on every statement of that instance fails with SQLSTATE
-- IQF01, and it starts over under a new id with nothing held.
--
-- `quota_holdings` says, per instance and subject, what of a day window's `granted` it
-- holds: leased, minus what it has reported spent or given back. Of that, the instance
-- may have spent at most `at_risk` without reporting it: it reports (a flush) before
-- its unreported calls reach that bound. Reclaim therefore gives back `held - at_risk`
-- and counts `at_risk` as used: a crash may count calls that were never made (at most
-- `at_risk` per subject), never miss one that was, and never lets the instances admit
-- more than the limit. Minute windows are not held here: their budget comes back when
-- the minute ends.
--
-- The V4 and V10 functions stay for instances of the previous version during a rolling
-- update; their leases are not tracked here, as before.

CREATE TABLE quota_instances (
    instance_id  bigint PRIMARY KEY,
    expires_at   timestamptz NOT NULL,
    reclaimed_at timestamptz
);

CREATE INDEX quota_instances_expiry ON quota_instances (expires_at)
    WHERE reclaimed_at IS NULL;

CREATE TABLE quota_holdings (
    instance_id  bigint NOT NULL,
    subject      text NOT NULL,
    window_start timestamptz NOT NULL,
    held         bigint NOT NULL DEFAULT 0,
    at_risk      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (instance_id, subject, window_start)
);

CREATE INDEX quota_holdings_age ON quota_holdings (window_start);

-- Renews the instance's proof of life until now + p_ttl; fails with IQF01 when its
-- leases were reclaimed (it was out of touch for longer than its TTL).
CREATE FUNCTION quota_renew(p_instance_id bigint, p_ttl interval) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO quota_instances (instance_id, expires_at)
    VALUES (p_instance_id, now() + p_ttl)
    ON CONFLICT (instance_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
    WHERE quota_instances.reclaimed_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'quota instance % was reclaimed', p_instance_id
            USING ERRCODE = 'IQF01';
    END IF;
END
$$;

-- quota_lease_subjects (V10) for one instance: renews it, and records what it takes
-- and gives back of day windows in its holdings, with the bound on its unreported
-- calls (the largest asked this day: a lower limit later does not shrink what the
-- instance may already have spent).
CREATE FUNCTION quota_lease_held(
    p_instance_id bigint,
    p_ttl         interval,
    p_subjects    text[],
    p_spans       text[],
    p_starts      timestamptz[],
    p_wants       bigint[],
    p_limits      bigint[],
    p_returns     bigint[],
    p_at_risk     bigint[]
) RETURNS TABLE (lease_index bigint, lease_taken bigint, lease_granted bigint)
LANGUAGE plpgsql AS $$
DECLARE
    grant_row record;
BEGIN
    PERFORM quota_renew(p_instance_id, p_ttl);
    FOR grant_row IN
        SELECT g.lease_index, g.lease_taken, g.lease_granted
        FROM quota_lease_subjects(p_subjects, p_spans, p_starts, p_wants, p_limits,
                                  p_returns) AS g
    LOOP
        IF p_spans[grant_row.lease_index] = 'day' THEN
            INSERT INTO quota_holdings AS h (instance_id, subject, window_start, held, at_risk)
            VALUES (p_instance_id, p_subjects[grant_row.lease_index],
                    p_starts[grant_row.lease_index], grant_row.lease_taken,
                    p_at_risk[grant_row.lease_index])
            ON CONFLICT (instance_id, subject, window_start) DO UPDATE
            SET held = greatest(0, h.held - p_returns[grant_row.lease_index])
                       + grant_row.lease_taken,
                at_risk = greatest(h.at_risk, EXCLUDED.at_risk);
        END IF;
        lease_index := grant_row.lease_index;
        lease_taken := grant_row.lease_taken;
        lease_granted := grant_row.lease_granted;
        RETURN NEXT;
    END LOOP;
END
$$;

-- quota_flush (V4) for one instance: renews it first (IQF01 when reclaimed: nothing
-- is applied, and the instance sends its call records again under its new id), then
-- takes what it reports spent or gives back off its day holdings.
CREATE FUNCTION quota_report(
    p_instance_id bigint,
    p_ttl         interval,
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
BEGIN
    PERFORM quota_renew(p_instance_id, p_ttl);
    IF NOT quota_flush(p_instance_id, p_seq, p_now, p_key_ids, p_spans, p_starts,
                       p_used, p_returns, l_request_ids, l_key_ids, l_api_names,
                       l_codes, l_rows, l_latency_us, l_called_at) THEN
        RETURN false;
    END IF;
    UPDATE quota_holdings AS h
    SET held = greatest(0, h.held - r.used - r.returned)
    FROM unnest(p_key_ids, p_spans, p_starts, p_used, p_returns)
         AS r (subject, span, window_start, used, returned)
    WHERE r.span = 'day' AND h.instance_id = p_instance_id
      AND h.subject = r.subject AND h.window_start = r.window_start;
    RETURN true;
END
$$;

-- Gives back the day budget of every instance whose proof of life has expired, minus
-- what it may have spent unreported, which is counted as used. Rows are locked in the
-- order of every other quota statement (subject, then window), and instances another
-- reclaim is working on are skipped. Answers how many of the reclaimed instances held
-- budget (an instance that stopped cleanly gave everything back, and is not counted),
-- the budget returned and the calls counted.
CREATE FUNCTION quota_reclaim(OUT instances bigint, OUT returned bigint, OUT counted bigint)
LANGUAGE plpgsql AS $$
DECLARE
    dead    bigint[];
    holding record;
    risk    bigint;
BEGIN
    returned := 0;
    counted := 0;
    SELECT coalesce(array_agg(e.instance_id), '{}') INTO dead
    FROM (SELECT q.instance_id FROM quota_instances q
          WHERE q.reclaimed_at IS NULL AND q.expires_at < now()
          FOR UPDATE SKIP LOCKED) AS e;
    IF coalesce(array_length(dead, 1), 0) = 0 THEN
        instances := 0;
        RETURN;
    END IF;
    UPDATE quota_instances SET reclaimed_at = now() WHERE instance_id = ANY (dead);
    SELECT count(DISTINCT h.instance_id) INTO instances
    FROM quota_holdings h WHERE h.instance_id = ANY (dead) AND h.held > 0;
    FOR holding IN
        SELECT h.subject, h.window_start, h.held, h.at_risk
        FROM quota_holdings h
        WHERE h.instance_id = ANY (dead) AND h.held > 0
        ORDER BY h.subject COLLATE "C", h.window_start
    LOOP
        risk := least(holding.at_risk, holding.held);
        UPDATE quota_windows
        SET granted = greatest(0, granted - (holding.held - risk)), used = used + risk
        WHERE key_id = holding.subject AND span = 'day'
          AND window_start = holding.window_start;
        returned := returned + holding.held - risk;
        counted := counted + risk;
    END LOOP;
    DELETE FROM quota_holdings WHERE instance_id = ANY (dead);
END
$$;
