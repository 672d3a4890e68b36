-- Point-in-time history (D17). Every accepted import publishes one vintage: a number
-- taken under the import lock, so vintages are in publication order, and the instant
-- it was published, taken as the import's last statement before it commits.
--
-- `index_quotes` and `index_daily` keep holding exactly the current rows, so a query
-- without `as_of` reads what it always read; each row names the vintage that published
-- its current values. A row an import replaces with other values, or drops, moves to
-- the matching `_history` table with the vintage that superseded it. A row rewritten
-- with the same values keeps its vintage (it is not a new version). So storage grows
-- with what changed, and the rows current at vintage V are the current rows with
-- `vintage <= V` plus the history rows with `vintage <= V < superseded_by`.

CREATE TABLE vintages (
    vintage      bigint PRIMARY KEY,
    -- The accepted import that published it; NULL for vintage 1, made below.
    import_id    bigint UNIQUE REFERENCES imports (import_id) ON DELETE SET NULL,
    published_at timestamptz NOT NULL UNIQUE
);

-- Numbers for vintages. 1 is the data written before history was kept (or, in a
-- test fixture, by hand rather than by an import): published when this migration ran,
-- or at the end of the last import accepted before it.
CREATE SEQUENCE vintage_numbers START 2;

INSERT INTO vintages (vintage, import_id, published_at)
SELECT 1, NULL, coalesce((SELECT max(finished_at) FROM imports WHERE result = 'accepted'), now());

-- A constant default fills existing rows without rewriting the table. Imports always
-- name the vintage of the rows they write.
ALTER TABLE index_quotes ADD COLUMN vintage bigint NOT NULL DEFAULT 1;
ALTER TABLE index_daily ADD COLUMN vintage bigint NOT NULL DEFAULT 1;

CREATE TABLE index_quotes_history (
    trade_date    date NOT NULL,
    index_code    text COLLATE "C" NOT NULL,
    specification text COLLATE "C" NOT NULL,
    weight        numeric(10, 8) NOT NULL,
    price         numeric(24, 6) NOT NULL,
    vintage       bigint NOT NULL,
    superseded_by bigint NOT NULL CHECK (superseded_by > vintage),
    -- In the order the answers are sorted in, so an `as_of` page merges the current
    -- rows' key with this one without a sort.
    PRIMARY KEY (trade_date, index_code, specification, vintage)
);

CREATE TABLE index_daily_history (
    trade_date     date NOT NULL,
    index_code     text COLLATE "C" NOT NULL,
    index_value    numeric(24, 6) NOT NULL,
    weighted_price numeric(24, 6),
    pre_value      numeric(24, 6),
    change         numeric(24, 6),
    pct_change     numeric(24, 6),
    vintage        bigint NOT NULL,
    superseded_by  bigint NOT NULL CHECK (superseded_by > vintage),
    PRIMARY KEY (trade_date, index_code, vintage)
);
-- `index_latest` as of a past instant looks for each index's last day.
CREATE INDEX index_daily_history_by_index ON index_daily_history (index_code, trade_date);

-- The (date, index) days of quotes each vintage changed: a quote added, revised or
-- dropped. `updated_since` on `index_quote` answers whole days, found here.
CREATE TABLE quote_days_changed (
    vintage    bigint NOT NULL,
    trade_date date NOT NULL,
    index_code text COLLATE "C" NOT NULL,
    PRIMARY KEY (vintage, trade_date, index_code)
);
INSERT INTO quote_days_changed (vintage, trade_date, index_code)
SELECT DISTINCT 1, trade_date, index_code FROM index_quotes;
