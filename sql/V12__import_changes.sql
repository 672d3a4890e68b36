-- What each accepted quote import changed, per index (the composite included), so the
-- back office can show it later; and the listed problems of a rejected one.
--
-- quote_days_*: (date, index) days of quotes the file held that did not exist before
-- (added) or whose quotes it replaced (replaced). daily_rows_*: index_daily rows the
-- recalculation wrote that did not exist before (added) or that existed with another
-- value in any column (revised); rows rewritten unchanged are in neither.
CREATE TABLE import_changes (
    import_id           bigint NOT NULL REFERENCES imports (import_id) ON DELETE CASCADE,
    index_code          text COLLATE "C" NOT NULL,
    quote_days_added    integer NOT NULL CHECK (quote_days_added >= 0),
    quote_days_replaced integer NOT NULL CHECK (quote_days_replaced >= 0),
    daily_rows_added    integer NOT NULL CHECK (daily_rows_added >= 0),
    daily_rows_revised  integer NOT NULL CHECK (daily_rows_revised >= 0),
    PRIMARY KEY (import_id, index_code)
);

-- The first problems of a rejected or failed import, as its answer listed them (at most
-- 1,000 `{row, column, reason}` objects; `[]` when the refusal was not about rows).
-- NULL for accepted imports and for those recorded before this column existed.
ALTER TABLE imports ADD COLUMN row_errors jsonb
    CHECK (row_errors IS NULL OR jsonb_typeof(row_errors) = 'array');
