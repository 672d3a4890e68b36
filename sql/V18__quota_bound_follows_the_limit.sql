-- A day limit lowered the same day keeps its crash bound: a dead instance's holding
-- counts `at_risk` calls as used, and V15 kept the largest bound asked that day, so a
-- key lowered from 10,000 to 100 a day lost up to 100 calls (1% of the old limit) to a
-- crash instead of at most 1. The instance now sends the bound of what it may have
-- unreported from the statement on (the current limit's, or its calls unreported now
-- when they are more), so the holding takes the value it is sent.
CREATE OR REPLACE FUNCTION quota_lease_held(
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
                at_risk = EXCLUDED.at_risk;
        END IF;
        lease_index := grant_row.lease_index;
        lease_taken := grant_row.lease_taken;
        lease_granted := grant_row.lease_granted;
        RETURN NEXT;
    END LOOP;
END
$$;
