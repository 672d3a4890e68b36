-- Events (D22): facts about availability, never values. The outbox every delivery and
-- the feed read, written in the transaction that makes the fact true: an import's
-- commit publishes its values and its events together, a rolled-back import leaves
-- neither.
--
-- An event is for one tier: what the tier may see (its indexes, its delay) decides
-- whether and when it exists. `index.published`: trading days of an index became
-- visible to the tier (published within its window, or entered its window at a day
-- boundary); `index.revised`: values the tier could already see changed. A key's
-- index range narrows what its owner reads, at reading time.
--
-- Ids are taken, and events committed, by one writer at a time (every writer locks
-- the tier's `event_windows` row first), so ids are in commit order: a reader that
-- remembers the last id it saw never misses a later-committed event with a smaller id.
CREATE TABLE events (
    event_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tier         text NOT NULL REFERENCES tiers (tier),
    event_type   text NOT NULL CHECK (event_type IN ('index.published', 'index.revised')),
    index_code   text COLLATE "C" NOT NULL,
    -- Ascending, never empty.
    trade_dates  date[] NOT NULL CHECK (cardinality(trade_dates) > 0),
    -- When the newest of the values was published (its vintage's instant).
    published_at timestamptz NOT NULL,
    -- When the event happened: the import's publication, or the day boundary.
    created_at   timestamptz NOT NULL
);
-- The feed reads a tier's events after an id.
CREATE INDEX events_by_tier ON events (tier, event_id);

-- Per tier, the delay cutoff (D5) up to which the tier has been told of every
-- published day. NULL until the tier's window is first placed: events start there,
-- with no backlog of what was published before events existed.
CREATE TABLE event_windows (
    tier        text PRIMARY KEY REFERENCES tiers (tier) ON DELETE CASCADE,
    cutoff      date,
    advanced_at timestamptz
);
INSERT INTO event_windows (tier) SELECT tier FROM tiers;

-- An import finds the daily rows its vintage wrote by this.
CREATE INDEX index_daily_by_vintage ON index_daily (vintage);
