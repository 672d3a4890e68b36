//! Weekly and monthly values (D25), read back with a professional member's key and
//! checked against the test's own computation from `index_daily`: per index and ISO
//! week (or calendar month) of visible daily values, the last day's value and date,
//! the first, the highest and the lowest, the previous period's last value, the change
//! and `round6(change / pre_value x 100)`. An index that starts mid-week, the month in
//! progress, a delayed member's week cut short by its cutoff, and the same under
//! `as_of` before a correction.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};
use rust_decimal::prelude::*;
use rust_decimal::RoundingStrategy;
use serde_json::{json, Value};

use crate::helpers::quotes::{import, import_noted};
use crate::helpers::{spawn_with_sql, Key, TestApp};

/// Weekdays of October and November 2026 (the test clock stands on Friday 20 Nov).
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-10-01'::date, '2026-11-30'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

type Quote = (String, String, String, String, String);

/// Server_Index from Thursday 1 Oct, GPU_Index from Wednesday 4 Nov (mid-week), on
/// every weekday to Friday 20 Nov, at prices that rise and fall.
fn quotes() -> Vec<Quote> {
    let mut quotes = Vec::new();
    let mut day = NaiveDate::from_ymd_opt(2026, 10, 1).unwrap();
    let mut n = 0u32;
    while day <= NaiveDate::from_ymd_opt(2026, 11, 20).unwrap() {
        if day.weekday().number_from_monday() <= 5 {
            n += 1;
            let date = day.format("%Y%m%d").to_string();
            let price = |seed: u32| format!("{}.{:03}", 1000 + (n * 37 + seed) % 23 * 7, n % 1000);
            quotes.push((
                date.clone(),
                "Server_Index".into(),
                "8x H100".into(),
                "0.7".into(),
                price(3),
            ));
            quotes.push((
                date.clone(),
                "Server_Index".into(),
                "8x H200".into(),
                "0.3".into(),
                price(11),
            ));
            if day >= NaiveDate::from_ymd_opt(2026, 11, 4).unwrap() {
                quotes.push((
                    date,
                    "GPU_Index".into(),
                    "unit".into(),
                    "1".into(),
                    price(5),
                ));
            }
        }
        day = day.succ_opt().unwrap();
    }
    quotes
}

fn dec(v: &Value) -> Option<Decimal> {
    v.as_str().map(|s| Decimal::from_str(s).unwrap())
}

fn round6(x: Decimal) -> Decimal {
    x.round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero)
}

/// A week (ISO year and week) or a month (year and month).
type Period = (i32, u32);

/// One period row as the test computes it or reads it: (trade_date, index_code) and
/// close, open, high, low, pre_value, change, pct_change.
type Row = ((String, String), [Option<Decimal>; 7]);

async fn rows(app: &TestApp, key: &Key, api_name: &str, params: Value) -> Vec<Value> {
    let reply = app
        .query_with(
            json!({"api_name": api_name, "params": params, "limit": 5000}),
            Some(&key.key),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply.items().clone()
}

/// The periods `period_of` a day computed from the index's daily values, as of `params`.
async fn expected(
    app: &TestApp,
    key: &Key,
    params: Value,
    period_of: fn(NaiveDate) -> Period,
) -> Vec<Row> {
    let daily = rows(app, key, "index_daily", params).await;
    // (index, period) -> [(date, value)], ascending.
    let mut periods: BTreeMap<(String, Period), Vec<(String, Decimal)>> = BTreeMap::new();
    for r in &daily {
        let date = r[0].as_str().unwrap().to_string();
        let day = NaiveDate::parse_from_str(&date, "%Y%m%d").unwrap();
        let code = r[1].as_str().unwrap().to_string();
        periods
            .entry((code, period_of(day)))
            .or_default()
            .push((date, dec(&r[2]).unwrap()));
    }
    let mut out = Vec::new();
    let mut previous: Option<(String, Decimal)> = None;
    for ((code, _), days) in periods {
        let (date, close) = days.last().unwrap().clone();
        let values: Vec<Decimal> = days.iter().map(|d| d.1).collect();
        let pre = previous
            .as_ref()
            .filter(|(c, _)| *c == code)
            .map(|(_, v)| *v);
        let change = pre.map(|p| close - p);
        let pct = pre.map(|p| round6((close - p) * Decimal::ONE_HUNDRED / p));
        out.push((
            (date, code.clone()),
            [
                Some(close),
                Some(values[0]),
                values.iter().max().copied(),
                values.iter().min().copied(),
                pre,
                change,
                pct,
            ],
        ));
        previous = Some((code, close));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

async fn served(app: &TestApp, key: &Key, api_name: &str, params: Value) -> Vec<Row> {
    rows(app, key, api_name, params)
        .await
        .iter()
        .map(|r| {
            let key = (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            );
            let cells = [2, 3, 4, 5, 6, 7, 8].map(|i| dec(&r[i]));
            (key, cells)
        })
        .collect()
}

fn iso_week(day: NaiveDate) -> Period {
    let week = day.iso_week();
    (week.year(), week.week())
}

fn month(day: NaiveDate) -> Period {
    (day.year(), day.month())
}

async fn assert_periods(app: &TestApp, key: &Key, params: Value) {
    for (api_name, period_of) in [
        ("index_weekly", iso_week as fn(NaiveDate) -> Period),
        ("index_monthly", month),
    ] {
        let want = expected(app, key, params.clone(), period_of).await;
        assert!(want.len() > 2, "{api_name}: {want:?}");
        assert_eq!(
            served(app, key, api_name, params.clone()).await,
            want,
            "{api_name}"
        );
    }
}

#[actix_web::test]
async fn weekly_and_monthly_values_are_the_periods_of_the_daily_ones() {
    let app = spawn_with_sql(CALENDAR).await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "petra", "pro").await;
    let first = import(&app, &admin, "quotes.csv", &quotes()).await;
    let before = first.data()["published_at"].as_str().unwrap().to_string();
    assert_periods(&app, &key, json!({})).await;

    // GPU_Index's first week starts on its first day, a Wednesday, with no pre_value;
    // November is the month in progress, dated by its latest value.
    let weeks = served(
        &app,
        &key,
        "index_weekly",
        json!({"index_code": "GPU_Index"}),
    )
    .await;
    assert_eq!(weeks[0].0 .0, "20261106");
    assert_eq!(weeks[0].1[4], None);
    let months = served(&app, &key, "index_monthly", json!({})).await;
    let last = months.last().unwrap();
    assert_eq!(last.0, ("20261120".to_string(), "Server_Index".to_string()));

    // A free member's cutoff (seven open days back: Wednesday 11 Nov) cuts its week
    // short: the periods before it are kept ones, its own is grouped from its days.
    let free = app.key_of_tier(&admin, "fiona", "free").await;
    assert_periods(&app, &free, json!({})).await;
    let weeks = served(&app, &free, "index_weekly", json!({})).await;
    assert_eq!(weeks.last().unwrap().0 .0, "20261111", "{weeks:?}");

    // A correction of Server_Index on Tuesday 10 Nov moves its week (and the next
    // week's pre_value); as_of before it answers the periods as they stood.
    let fix = [
        ("20261110", "Server_Index", "8x H100", "0.7", "2500"),
        ("20261110", "Server_Index", "8x H200", "0.3", "900"),
    ];
    import_noted(&app, &admin, "fix.csv", &fix, Some("a wrong H100 quote")).await;
    assert_periods(&app, &key, json!({})).await;
    assert_periods(&app, &key, json!({"as_of": before})).await;
    assert_ne!(
        served(&app, &key, "index_weekly", json!({})).await,
        served(&app, &key, "index_weekly", json!({"as_of": before})).await
    );
    // Since the first import, the corrected week changed (its high, low and, through
    // Tuesday, its days) and November: nothing else. The next week's pre_value is
    // Friday 13 Nov's level, which a correction of Tuesday leaves as it was (D26:
    // levels are ratios to the base day).
    let since = json!({"updated_since": before});
    let changed = |rows: Vec<Row>| rows.into_iter().map(|r| r.0).collect::<Vec<_>>();
    let server = |date: &str| (date.to_string(), "Server_Index".to_string());
    assert_eq!(
        changed(served(&app, &key, "index_weekly", since.clone()).await),
        [server("20261113")]
    );
    assert_eq!(
        changed(served(&app, &key, "index_monthly", since).await),
        [server("20261120")]
    );
    // Date params bound the periods' trade_date; the pre_value still reads the period
    // before.
    let bounded = served(
        &app,
        &key,
        "index_weekly",
        json!({"index_code": "Server_Index", "start_date": "20261109", "end_date": "20261113"}),
    )
    .await;
    assert_eq!(bounded.len(), 1);
    assert_eq!(bounded[0].0 .0, "20261113");
    assert!(bounded[0].1[4].is_some());
}
