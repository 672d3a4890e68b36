//! The fixed data of the tests: the instant the test clock stands at ([`now`]) and the
//! small hand-made data set [`FIXTURE`] (with [`DATASETS_BUT_REVISIONS`], those it
//! fills). Constants only: it must never start anything or talk to a database.

use chrono::{DateTime, TimeZone, Utc};

/// Friday 20 November 2026, 12:00 in Shanghai.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 4, 0, 0).unwrap()
}

/// A small hand-made data set with values chosen to test formatting, ordering and the
/// delay cutoff. With the clock at [`now`] (Friday 20 Nov 2026) and 16 Nov a holiday,
/// the free tier's cutoff (7 open days) is Tuesday 10 Nov 2026.
pub const FIXTURE: &str = r#"
INSERT INTO trade_calendar (trade_date)
SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-30'::date, '1 day') AS d
WHERE extract(isodow FROM d) < 6 AND d::date <> '2026-11-16';

INSERT INTO index_daily (trade_date, index_code, index_value, weighted_price, pre_value, change, pct_change) VALUES
 ('2026-11-09', 'Server_Index', 1000, 250000.5, NULL, NULL, NULL),
 ('2026-11-10', 'Server_Index', 1010.123456, 252531.36, 1000, 10.123456, 1.0123456),
 ('2026-11-11', 'Server_Index', 999.5, 249875.12, 1010.123456, -10.623456, -1.051698),
 ('2026-11-09', 'SSD_Index', 1000, 480.25, NULL, NULL, NULL),
 ('2026-11-10', 'SSD_Index', 1002, 481.2105, 1000, 2, 0.2),
 ('2026-11-09', 'GPU_Index', 1000, 30000, NULL, NULL, NULL),
 ('2026-11-10', 'GPU_Index', 990, 29700, 1000, -10, -1),
 ('2026-11-09', 'Hardware_Index', 1000, NULL, NULL, NULL, NULL),
 ('2026-11-10', 'Hardware_Index', 1003.3, NULL, 1000, 3.3, 0.33);

INSERT INTO index_quotes (trade_date, index_code, specification, weight, price) VALUES
 ('2026-11-10', 'Server_Index', 'b 8x H100 SXM 80GB', 0.5, 250000.1),
 ('2026-11-10', 'Server_Index', 'B 8x H200 SXM 141GB', 0.4, 255328.2),
 ('2026-11-10', 'Server_Index', 'Ä 8x B200 SXM 180GB', 0.1, 465000),
 ('2026-11-11', 'Server_Index', 'B 8x H200 SXM 141GB', 1, 249875.12),
 ('2026-11-10', 'GPU_Index', 'H100 SXM5 80GB', 1, 29700);
"#;

/// Every dataset but `index_revisions`: those that data set up without revising a day
/// (the [`FIXTURE`], a test's first imports) gives rows. A test of what holds for every
/// dataset walks these.
pub const DATASETS_BUT_REVISIONS: [&str; 7] = [
    "index_basic",
    "index_daily",
    "index_weekly",
    "index_monthly",
    "index_latest",
    "index_quote",
    "trade_calendar",
];
