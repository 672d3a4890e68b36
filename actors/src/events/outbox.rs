//! The outbox: the one statement that writes events (D22), in the caller's transaction.
//!
//! Each tier has a window (`event_windows`): the delay cutoff (D5) up to which it has
//! been told of every published day. The statement moves every window to today's
//! cutoff and writes, per tier and index:
//!
//! - `index.published` for the days that entered the window (published earlier,
//!   visible now), and for the days the vintage being published added within it;
//! - `index.revised` for the days within the window the vintage replaced with other
//!   values (D21's revisions), with the vintage's reason (D26).
//!
//! A day the vintage added or revised beyond a tier's cutoff is told when it enters the
//! window, as published: that tier never saw the earlier value. Only indexes the tier
//! may see (never `private`, `member` only for a tier with member indexes) have events.
//!
//! It locks every window row first, so writers take turns: event ids are in commit
//! order, and a window is never moved by two writers at once (two instances crossing
//! a day boundary together write its events once). It must never be run outside a
//! transaction that commits what it describes.

use chrono::{DateTime, NaiveDate, Utc};
use tokio_postgres::Transaction;

use crate::db::Traced;
use crate::ApiError;

/// Writes the events of `vintage` (being published in `tx`; `None` for a day
/// boundary) and of the days that entered each tier's window by `today`, the service
/// time zone's date at `now`. Returns how many events it wrote.
pub async fn record(
    tx: &Transaction<'_>,
    vintage: Option<i64>,
    today: NaiveDate,
    now: DateTime<Utc>,
) -> Result<u64, ApiError> {
    let row = tx
        .query_one_named(
            "events.record",
            "WITH windows AS (\
               SELECT w.tier, w.cutoff AS old, t.member_indexes, \
                      (SELECT c.trade_date FROM trade_calendar c WHERE c.trade_date <= $1 \
                       ORDER BY c.trade_date DESC OFFSET t.delay_days LIMIT 1) AS new \
               FROM event_windows w JOIN tiers t ON t.tier = w.tier \
               ORDER BY w.tier FOR UPDATE OF w), \
             days AS (\
               SELECT w.tier, 'index.published' AS event_type, d.index_code, d.trade_date, \
                      d.vintage \
               FROM windows w JOIN index_daily d \
                 ON d.trade_date > w.old AND d.trade_date <= w.new \
               UNION ALL \
               SELECT w.tier, 'index.published', d.index_code, d.trade_date, d.vintage \
               FROM windows w JOIN index_daily d \
                 ON d.vintage = $2 AND d.trade_date <= least(coalesce(w.old, w.new), w.new) \
               WHERE NOT EXISTS (SELECT 1 FROM index_revisions r WHERE r.vintage = $2 \
                 AND r.index_code = d.index_code AND r.trade_date = d.trade_date) \
               UNION ALL \
               SELECT w.tier, 'index.revised', r.index_code, r.trade_date, r.vintage \
               FROM windows w JOIN index_revisions r \
                 ON r.vintage = $2 AND r.trade_date <= least(coalesce(w.old, w.new), w.new)), \
             written AS (\
               INSERT INTO events (tier, event_type, index_code, trade_dates, published_at, \
                                   created_at, reason) \
               SELECT x.tier, x.event_type, x.index_code, \
                      array_agg(DISTINCT x.trade_date ORDER BY x.trade_date), \
                      max(v.published_at), $3, \
                      CASE WHEN x.event_type = 'index.revised' THEN max(v.reason) END \
               FROM days x \
               JOIN windows w ON w.tier = x.tier \
               JOIN indexes i ON i.index_code = x.index_code \
               JOIN vintages v ON v.vintage = x.vintage \
               WHERE i.visibility IN ('aggregate', 'index_only') \
                  OR (i.visibility = 'member' AND w.member_indexes) \
               GROUP BY x.tier, x.event_type, x.index_code, i.sort_no \
               ORDER BY x.tier, i.sort_no, x.index_code, x.event_type \
               RETURNING 1), \
             moved AS (\
               UPDATE event_windows e SET cutoff = w.new, advanced_at = $3 \
               FROM windows w \
               WHERE e.tier = w.tier AND w.new IS NOT NULL \
                 AND e.cutoff IS DISTINCT FROM w.new \
               RETURNING 1) \
             SELECT (SELECT count(*) FROM written), (SELECT count(*) FROM moved)",
            &[&today, &vintage, &now],
        )
        .await?;
    let written: i64 = row.try_get(0)?;
    Ok(u64::try_from(written).unwrap_or(0))
}
