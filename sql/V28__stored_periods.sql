-- Weekly and monthly values (D25) kept as the daily values change, so a page of them
-- reads as many rows as it answers: `index_periods` holds each index's weeks and
-- months, with the previous period's close, grouped from `index_daily` by the
-- triggers below in the statement that changes it. A current query reads the periods
-- that start before the caller's cutoff's own period from here, and groups that one
-- period (which the cutoff may cut short) from the daily rows; a point-in-time query
-- (`as_of`) groups the daily rows as they were, as before.

-- The first day of the week (ISO: Monday; 1900-01-01 was one) or month `day` is in.
CREATE FUNCTION period_start(unit text, day date) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE unit
        WHEN 'week' THEN day - ((day - DATE '1900-01-01') % 7)
        WHEN 'month' THEN date_trunc('month', day::timestamp)::date
    END
$$;

-- The first day after the period that starts on `start`.
CREATE FUNCTION period_end(unit text, start date) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE unit
        WHEN 'week' THEN start + 7
        WHEN 'month' THEN (start + interval '1 month')::date
    END
$$;

CREATE TABLE index_periods (
    unit           text NOT NULL CHECK (unit IN ('week', 'month')),
    index_code     text COLLATE "C" NOT NULL,
    period_start   date NOT NULL,
    -- The period's last day with a value, and that day's value (the close).
    trade_date     date NOT NULL,
    index_value    numeric(24, 6) NOT NULL,
    open_value     numeric(24, 6) NOT NULL,
    high_value     numeric(24, 6) NOT NULL,
    low_value      numeric(24, 6) NOT NULL,
    -- The previous period's close (NULL for an index's first period).
    pre_value      numeric(24, 6),
    -- The newest vintage among the period's days, and its last day's; `vintage` is the
    -- newer of the first and the previous period's last day's, what the period's
    -- values depend on (D17: what `updated_since` compares).
    newest_vintage bigint NOT NULL,
    last_vintage   bigint NOT NULL,
    vintage        bigint NOT NULL,
    PRIMARY KEY (unit, index_code, period_start)
);
-- A page in the datasets' order: by day, then index.
CREATE INDEX index_periods_in_order ON index_periods (unit, trade_date, index_code);

-- Groups again the weeks and months of each (index, day) given from `index_daily` as
-- it is now (a period with no day left goes), then sets the previous close and the
-- vintage of each of them and of the period after each (whose previous close it is).
CREATE FUNCTION refresh_index_periods(codes text[], days date[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    units text[];
    keys_code text[];
    keys_start date[];
BEGIN
    SELECT array_agg(t.unit), array_agg(t.index_code), array_agg(t.period_start)
        INTO units, keys_code, keys_start
        FROM (SELECT DISTINCT u.unit, k.index_code, period_start(u.unit, k.day) AS period_start
              FROM unnest(codes, days) AS k(index_code, day),
                   (VALUES ('week'), ('month')) AS u(unit)) t;
    DELETE FROM index_periods p
        USING unnest(units, keys_code, keys_start) AS t(unit, index_code, period_start)
        WHERE p.unit = t.unit AND p.index_code = t.index_code
          AND p.period_start = t.period_start;
    INSERT INTO index_periods (unit, index_code, period_start, trade_date, index_value,
                               open_value, high_value, low_value, newest_vintage,
                               last_vintage, vintage)
        SELECT t.unit, t.index_code, t.period_start, max(d.trade_date),
               (array_agg(d.index_value ORDER BY d.trade_date DESC))[1],
               (array_agg(d.index_value ORDER BY d.trade_date))[1],
               max(d.index_value), min(d.index_value), max(d.vintage),
               (array_agg(d.vintage ORDER BY d.trade_date DESC))[1], max(d.vintage)
        FROM unnest(units, keys_code, keys_start) AS t(unit, index_code, period_start)
        JOIN index_daily d ON d.index_code = t.index_code
                          AND d.trade_date >= t.period_start
                          AND d.trade_date < period_end(t.unit, t.period_start)
        GROUP BY t.unit, t.index_code, t.period_start;
    WITH touched AS (
        SELECT * FROM unnest(units, keys_code, keys_start) AS t(unit, index_code, period_start)
    ), affected AS (
        SELECT unit, index_code, period_start FROM touched
        UNION
        SELECT n.unit, n.index_code, n.period_start
        FROM touched t CROSS JOIN LATERAL (
            SELECT q.unit, q.index_code, q.period_start FROM index_periods q
            WHERE q.unit = t.unit AND q.index_code = t.index_code
              AND q.period_start > t.period_start
            ORDER BY q.period_start LIMIT 1) n
    )
    UPDATE index_periods p
        SET pre_value = prev.index_value,
            vintage = greatest(p.newest_vintage, prev.last_vintage)
        FROM affected a LEFT JOIN LATERAL (
            SELECT q.index_value, q.last_vintage FROM index_periods q
            WHERE q.unit = a.unit AND q.index_code = a.index_code
              AND q.period_start < a.period_start
            ORDER BY q.period_start DESC LIMIT 1) prev ON true
        WHERE p.unit = a.unit AND p.index_code = a.index_code
          AND p.period_start = a.period_start;
END
$$;

CREATE FUNCTION index_periods_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    codes text[];
    days date[];
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        TRUNCATE index_periods;
        RETURN NULL;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT array_agg(index_code), array_agg(trade_date) INTO codes, days FROM changed_new;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(index_code), array_agg(trade_date) INTO codes, days FROM changed_old;
    ELSE
        SELECT array_agg(k.index_code), array_agg(k.trade_date) INTO codes, days
        FROM (SELECT index_code, trade_date FROM changed_new
              UNION SELECT index_code, trade_date FROM changed_old) k;
    END IF;
    IF codes IS NOT NULL THEN
        PERFORM refresh_index_periods(codes, days);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER index_periods_after_insert AFTER INSERT ON index_daily
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION index_periods_follow();
CREATE TRIGGER index_periods_after_update AFTER UPDATE ON index_daily
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION index_periods_follow();
CREATE TRIGGER index_periods_after_delete AFTER DELETE ON index_daily
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION index_periods_follow();
CREATE TRIGGER index_periods_after_truncate AFTER TRUNCATE ON index_daily
    FOR EACH STATEMENT EXECUTE FUNCTION index_periods_follow();

-- The periods of the values already there.
SELECT refresh_index_periods(array_agg(index_code), array_agg(trade_date)) FROM index_daily;
