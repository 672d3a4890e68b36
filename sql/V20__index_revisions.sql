-- Revisions (D21): one row each time a published `index_daily` row was replaced by a
-- row with different values, read by the `index_revisions` dataset.
--
-- It is a read model of D17's history, written in the transaction that publishes the
-- vintage (the same statement as the `vintages` row, so it holds that instant): a page
-- of revisions is then an index scan in the answer's order, as cheap as a page of
-- `index_daily`, instead of a join of history, current rows and vintages sorted for
-- each page. Rows dropped rather than replaced, first publications and rewrites with
-- the same values are not revisions (the last two never reach history).
CREATE TABLE index_revisions (
    -- When the new value was published (its vintage's `published_at`).
    published_at          timestamptz NOT NULL,
    index_code            text COLLATE "C" NOT NULL,
    trade_date            date NOT NULL,
    -- When the value it replaced had been published.
    previous_published_at timestamptz NOT NULL,
    previous_value        numeric(24, 6) NOT NULL,
    index_value           numeric(24, 6) NOT NULL,
    change                numeric(24, 6) NOT NULL,
    -- The vintage that published the new value: what the import writes by.
    vintage               bigint NOT NULL
);
-- The answer's order (D21): newest publication first, then index and date. Unique: a
-- vintage replaces a (date, index) row at most once, and vintages' instants are unique.
CREATE UNIQUE INDEX index_revisions_in_order
    ON index_revisions (published_at DESC, index_code, trade_date);

-- An import finds the rows its vintage superseded by this.
CREATE INDEX index_daily_history_by_superseding ON index_daily_history (superseded_by);

-- The revisions already in the history: each history row replaced by a row of the
-- vintage that superseded it, whether that row is current or history itself by now.
INSERT INTO index_revisions (published_at, index_code, trade_date, previous_published_at,
                             previous_value, index_value, change, vintage)
SELECT nv.published_at, h.index_code, h.trade_date, pv.published_at,
       h.index_value, n.index_value, n.index_value - h.index_value, h.superseded_by
FROM index_daily_history h
JOIN (SELECT trade_date, index_code, index_value, vintage FROM index_daily
      UNION ALL
      SELECT trade_date, index_code, index_value, vintage FROM index_daily_history) n
  ON n.trade_date = h.trade_date AND n.index_code = h.index_code
 AND n.vintage = h.superseded_by
JOIN vintages nv ON nv.vintage = h.superseded_by
JOIN vintages pv ON pv.vintage = h.vintage;
