-- IP allow-lists become `cidr[]`: PostgreSQL itself refuses an entry that is not an
-- address or range, so no stored entry can fail to parse later and be dropped (which,
-- when it was the only entry, used to leave an empty list that admits every address).
-- A key holding an entry that does not convert is switched off rather than widened:
-- its owner or an administrator re-enters the list and enables it again.
CREATE FUNCTION pg_temp.as_cidr(entry text) RETURNS cidr
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN entry::cidr;
EXCEPTION WHEN others THEN
    RETURN NULL;
END;
$$;

CREATE FUNCTION pg_temp.as_cidrs(entries text[]) RETURNS cidr[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(c), '{}') FROM unnest(entries) AS e, pg_temp.as_cidr(e) AS c
    WHERE c IS NOT NULL
$$;

UPDATE api_keys SET active = false
WHERE EXISTS (SELECT 1 FROM unnest(ip_allowlist) AS e WHERE pg_temp.as_cidr(e) IS NULL);

ALTER TABLE api_keys ALTER COLUMN ip_allowlist DROP DEFAULT;
ALTER TABLE api_keys ALTER COLUMN ip_allowlist TYPE cidr[]
    USING pg_temp.as_cidrs(ip_allowlist);
ALTER TABLE api_keys ALTER COLUMN ip_allowlist SET DEFAULT '{}';

-- Login counters were keyed by the typed user name; they are keyed hashes from now on.
-- The old rows are at most an hour of counters.
DELETE FROM login_failures;
