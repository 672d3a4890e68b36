//! The rows a period dataset (D25) reads its weeks or months from: its `{periods:week}`
//! or `{periods:month}` placeholder, filled by the SQL builder.
//!
//! Each row is one index's period up to the caller's cutoff: `index_code`, `period`
//! (its first day), `trade_date` (its last day with a value, so far), `index_value` (that
//! day's), `open_value`, `high_value`, `low_value`, `pre_value` (the previous period's
//! close) and `vintage` (the newest of its days' and of the previous period's last
//! day's: what its values depend on, for `updated_since`).
//!
//! - Current rows: the periods that start before the cutoff's own period come from
//!   `index_periods` (grouped when the daily values change, with their previous close:
//!   migration V28), and the cutoff's period is grouped from `index_daily` here, since a
//!   delayed caller's cutoff may cut it short; a page reads about as many rows as it
//!   answers, and no window runs over an index's history.
//! - With `as_of` (D17): every period is grouped from the daily rows as they were then,
//!   and a window gives each its previous close.
//!
//! Static SQL only: the unit is one of two literals, and the cutoff is a placeholder.

/// The units a period dataset groups by.
pub const UNITS: [&str; 2] = ["week", "month"];

/// The grouping of daily rows `daily` (a table or a subquery, aliased `d`) with
/// `condition` on them, by index and `unit`: every column but `pre_value` and
/// `vintage`, with `newest_vintage` and `last_vintage` from which a vintage is made.
fn grouped(unit: &str, daily: &str, condition: &str) -> String {
    format!(
        "SELECT d.index_code, period_start('{unit}', d.trade_date) AS period, \
                max(d.trade_date) AS trade_date, \
                (array_agg(d.index_value ORDER BY d.trade_date DESC))[1] AS index_value, \
                (array_agg(d.index_value ORDER BY d.trade_date))[1] AS open_value, \
                max(d.index_value) AS high_value, min(d.index_value) AS low_value, \
                max(d.vintage) AS newest_vintage, \
                (array_agg(d.vintage ORDER BY d.trade_date DESC))[1] AS last_vintage \
         FROM {daily} d WHERE {condition} \
         GROUP BY d.index_code, period"
    )
}

/// The columns every variant answers, in order (`g` a grouped row).
const COLUMNS: &str = "g.index_code, g.period, g.trade_date, g.index_value, g.open_value, \
                       g.high_value, g.low_value";

/// The period rows of `unit` as a parenthesised subquery: `as_of_daily` is the daily
/// rows current at `as_of` when one was given (the builder's `rows_at`), else `None`.
/// It reads `{cutoff}`, which the builder fills after.
pub fn rows(unit: &str, as_of_daily: Option<&str>) -> String {
    debug_assert!(UNITS.contains(&unit), "unknown period unit {unit}");
    match as_of_daily {
        Some(daily) => format!(
            "(SELECT {COLUMNS}, lag(g.index_value) OVER w AS pre_value, \
                     greatest(g.newest_vintage, lag(g.last_vintage) OVER w) AS vintage \
              FROM ({}) g \
              WINDOW w AS (PARTITION BY g.index_code ORDER BY g.period))",
            grouped(unit, daily, "d.trade_date <= {cutoff}")
        ),
        None => format!(
            "(SELECT s.index_code, s.period_start AS period, s.trade_date, s.index_value, \
                     s.open_value, s.high_value, s.low_value, s.pre_value, s.vintage \
              FROM index_periods s \
              WHERE s.unit = '{unit}' AND s.period_start < period_start('{unit}', {{cutoff}}) \
              UNION ALL \
              SELECT {COLUMNS}, prev.index_value AS pre_value, \
                     greatest(g.newest_vintage, prev.last_vintage) AS vintage \
              FROM ({}) g \
              LEFT JOIN LATERAL (\
                SELECT q.index_value, q.last_vintage FROM index_periods q \
                WHERE q.unit = '{unit}' AND q.index_code = g.index_code \
                  AND q.period_start < g.period \
                ORDER BY q.period_start DESC LIMIT 1) prev ON true)",
            grouped(
                unit,
                "index_daily",
                &format!(
                    "d.trade_date >= period_start('{unit}', {{cutoff}}) \
                     AND d.trade_date <= {{cutoff}}"
                ),
            )
        ),
    }
}

/// The placeholder of `unit`'s period rows in a dataset's `from`.
pub fn placeholder(unit: &str) -> String {
    format!("{{periods:{unit}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each unit's rows leave only the cutoff for the builder to fill; current rows read
    /// the kept periods, rows as of an instant only the daily rows given.
    #[test]
    fn period_rows_read_kept_periods_now_and_daily_rows_as_of() {
        for unit in UNITS {
            let now = rows(unit, None);
            let then = rows(unit, Some("(SELECT * FROM daily_then)"));
            for text in [&now, &then] {
                let left = text.replace("{cutoff}", "");
                assert!(!left.contains('{') && !left.contains('}'), "{left}");
                assert!(text.contains(&format!("period_start('{unit}'")), "{text}");
            }
            assert!(now.contains("FROM index_periods s") && now.contains("FROM index_daily d"));
            assert!(
                !now.contains(" OVER "),
                "no window over stored periods: {now}"
            );
            assert!(then.contains("FROM (SELECT * FROM daily_then) d"));
            assert!(!then.contains("index_periods"), "{then}");
        }
    }
}
