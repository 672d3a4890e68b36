-- Account quotas (D11): a key's counted calls also count against its owner's account,
-- in the same UTC minute and day, and where the tier's max_keys is finite the account
-- as a whole is capped at the tier's limits times max_keys, deleted keys included.
--
-- An account is a quota subject like a key: its windows are rows of quota_windows whose
-- key_id is 'acct:<user_id>' (key ids never contain a colon), leased and flushed by the
-- same rule, so the caps are exact across instances as the key limits are. Those rows
-- belong to no key, so the foreign key to api_keys goes. Nothing relied on its cascade:
-- keys are only ever soft-deleted, and old rows are pruned by age.

ALTER TABLE quota_windows DROP CONSTRAINT IF EXISTS quota_windows_key_id_fkey;

COMMENT ON COLUMN quota_windows.key_id IS
    'the quota subject: a key id, or acct:<user_id> for an account (D11)';

-- One lease statement for the windows of several subjects (a key and its account): for
-- each window, first give back p_returns[i] (budget taken under a limit that has since
-- changed), then take up to p_wants[i] without passing p_limits[i]. Answers, per window,
-- its position in the arrays (1-based), what was taken and the window's new total.
--
-- Rows are locked in (subject, span) order by byte value (COLLATE "C", the order Rust
-- sorts strings in), whatever the order of the arrays. quota_flush locks in the order
-- the instance sends, which is the same sort (subject, span, window_start), so no two
-- statements can wait on each other in a cycle.
--
-- quota_lease (V4) stays for instances of the previous version during a rolling update.
CREATE FUNCTION quota_lease_subjects(
    p_subjects text[],
    p_spans    text[],
    p_starts   timestamptz[],
    p_wants    bigint[],
    p_limits   bigint[],
    p_returns  bigint[]
) RETURNS TABLE (lease_index bigint, lease_taken bigint, lease_granted bigint)
LANGUAGE plpgsql AS $$
DECLARE
    ask     record;
    current bigint;
    taken   bigint;
BEGIN
    FOR ask IN
        SELECT *
        FROM unnest(p_subjects, p_spans, p_starts, p_wants, p_limits, p_returns)
             WITH ORDINALITY AS a (subject, span, window_start, want, cap, give_back, ord)
        ORDER BY subject COLLATE "C", span COLLATE "C", window_start
    LOOP
        INSERT INTO quota_windows (key_id, span, window_start)
        VALUES (ask.subject, ask.span, ask.window_start)
        ON CONFLICT DO NOTHING;
        SELECT granted INTO current FROM quota_windows
        WHERE key_id = ask.subject AND span = ask.span AND window_start = ask.window_start
        FOR UPDATE;
        current := greatest(0, current - ask.give_back);
        taken := least(ask.want, greatest(0, ask.cap - current));
        UPDATE quota_windows SET granted = current + taken
        WHERE key_id = ask.subject AND span = ask.span AND window_start = ask.window_start;
        lease_index := ask.ord;
        lease_taken := taken;
        lease_granted := current + taken;
        RETURN NEXT;
    END LOOP;
END
$$;
