//! Point-in-time history (D17), from outside: import, correct a past day, re-import;
//! then `as_of` before the correction answers the original quotes, index values and
//! composite, `as_of` after it the new ones; `updated_since` answers exactly what was
//! revised (quotes by whole day); unchanged rows keep their `published_at`; a delayed
//! caller's sync misses no row that entered its window late; two instances agree.
//!
//! Random sequences of imports check the defining property: `as_of` at each import's
//! publication equals what a plain query answered right after that import.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, Datelike, Duration as Days, NaiveDate, Utc, Weekday};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

use crate::helpers::quotes::{import, BASES};
use crate::helpers::{eventually, spawn_with, Key, Reply, Session, Spawn, TestApp};

/// Weekdays 2026-11-02 .. 2026-11-30.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-30'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

const DAYS: [&str; 5] = ["20261102", "20261103", "20261104", "20261105", "20261106"];

/// (trade_date, index_code, specification, weight, price)
type Quote = (String, String, String, String, String);

fn quote(date: &str, code: &str, spec: &str, weight: &str, price: &str) -> Quote {
    (
        date.into(),
        code.into(),
        spec.into(),
        weight.into(),
        price.into(),
    )
}

/// Every base on every day of [`DAYS`]; Server_Index with two specifications.
fn first_file() -> Vec<Quote> {
    let mut quotes = Vec::new();
    for (d, date) in DAYS.iter().enumerate() {
        for (i, code) in BASES.iter().enumerate() {
            let price = 1000 * (i + 1) + 10 * d + i;
            if *code == "Server_Index" {
                quotes.push(quote(date, code, "8x H100", "0.5", &format!("{price}")));
                quotes.push(quote(
                    date,
                    code,
                    "8x H200",
                    "0.5",
                    &format!("{}", price + 7),
                ));
            } else {
                quotes.push(quote(date, code, "unit", "1", &format!("{price}")));
            }
        }
    }
    quotes
}

fn published_at(reply: &Reply) -> String {
    reply.data()["published_at"]
        .as_str()
        .unwrap_or_else(|| panic!("no published_at: {}", reply.body))
        .to_string()
}

fn instant(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .with_timezone(&Utc)
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

const DAILY_FIELDS: [&str; 7] = [
    "trade_date",
    "index_code",
    "index_value",
    "pre_value",
    "change",
    "pct_change",
    "published_at",
];
const QUOTE_FIELDS: [&str; 6] = [
    "trade_date",
    "index_code",
    "specification",
    "weight",
    "price",
    "published_at",
];

/// Every row of `api_name` with `fields` and `params`, read by `key`.
async fn rows(
    app: &TestApp,
    key: &Key,
    api_name: &str,
    fields: &[&str],
    params: Value,
) -> Vec<Value> {
    let reply = app
        .query_with(
            json!({"api_name": api_name, "params": params, "fields": fields, "limit": 5000}),
            Some(&key.key),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.data()["has_more"], false, "{}", reply.body);
    reply.items().clone()
}

async fn daily(app: &TestApp, key: &Key, params: Value) -> Vec<Value> {
    rows(app, key, "index_daily", &DAILY_FIELDS, params).await
}

async fn quotes(app: &TestApp, key: &Key, params: Value) -> Vec<Value> {
    rows(app, key, "index_quote", &QUOTE_FIELDS, params).await
}

/// A row without its last cell (`published_at`).
fn values(row: &Value) -> Vec<Value> {
    let cells = row.as_array().expect("row");
    cells[..cells.len() - 1].to_vec()
}

fn key_of(row: &Value) -> (String, String) {
    (
        row[0].as_str().unwrap().to_string(),
        row[1].as_str().unwrap().to_string(),
    )
}

async fn spawn() -> (TestApp, Session, Key) {
    let app = spawn_with(Spawn {
        setup_sql: CALENDAR,
        ..Spawn::default()
    })
    .await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "petra", "pro").await;
    (app, admin, key)
}

#[actix_web::test]
async fn as_of_before_a_correction_answers_the_original_values_and_after_it_the_new_ones() {
    let (app, admin, key) = spawn().await;
    let first = first_file();
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first).await);
    let daily_1 = daily(&app, &key, json!({})).await;
    let quotes_1 = quotes(&app, &key, json!({})).await;
    assert_eq!(daily_1.len(), 7 * DAYS.len(), "six bases and the composite");
    assert!(daily_1.iter().all(|r| r[6] == p1.as_str()));

    // A correction of Server_Index's 8x H100 on 20261103 (8x H200 sent again the same),
    // and GPU_Index's 20261104 sent again unchanged.
    let mut correction: Vec<Quote> = first
        .iter()
        .filter(|q| {
            (q.0 == "20261103" && q.1 == "Server_Index")
                || (q.0 == "20261104" && q.1 == "GPU_Index")
        })
        .cloned()
        .collect();
    for q in &mut correction {
        if q.2 == "8x H100" {
            q.4 = "1234.5".into();
        }
    }
    let second = import(&app, &admin, "quotes.csv", &correction).await;
    let p2 = published_at(&second);
    assert!(instant(&p2) > instant(&p1));
    let daily_2 = daily(&app, &key, json!({})).await;
    let quotes_2 = quotes(&app, &key, json!({})).await;

    // The correction moved Server_Index and the composite on 20261103 and, as far as
    // the rounding of the chain-linking carries it, after; nothing else.
    let revised: BTreeSet<(String, String)> = daily_1
        .iter()
        .zip(&daily_2)
        .filter(|(a, b)| values(a) != values(b))
        .map(|(a, _)| key_of(a))
        .collect();
    assert!(revised.contains(&("20261103".into(), "Server_Index".into())));
    assert!(revised.contains(&("20261103".into(), "Hardware_Index".into())));
    assert!(revised
        .iter()
        .all(|(date, code)| date.as_str() >= "20261103"
            && (code == "Server_Index" || code == "Hardware_Index")));
    let revised_of = |code: &str| revised.iter().filter(|(_, c)| c == code).count();
    // Revised rows carry the new publication; every other row keeps its own.
    for row in &daily_2 {
        let want = if revised.contains(&key_of(row)) {
            &p2
        } else {
            &p1
        };
        assert_eq!(row[6], want.as_str(), "{row}");
    }

    // as_of the first publication: the original quotes, index values and composite.
    assert_eq!(daily(&app, &key, json!({"as_of": p1})).await, daily_1);
    assert_eq!(quotes(&app, &key, json!({"as_of": p1})).await, quotes_1);
    let latest_1 = rows(
        &app,
        &key,
        "index_latest",
        &DAILY_FIELDS,
        json!({"as_of": p1}),
    )
    .await;
    let hardware_1 = latest_1.iter().find(|r| r[1] == "Hardware_Index").unwrap();
    assert_eq!(
        hardware_1,
        daily_1.iter().rfind(|r| r[1] == "Hardware_Index").unwrap()
    );
    // A microsecond before it: nothing yet.
    let before = rfc3339(instant(&p1) - Days::microseconds(1));
    assert!(daily(&app, &key, json!({"as_of": before})).await.is_empty());
    assert!(quotes(&app, &key, json!({"as_of": before}))
        .await
        .is_empty());
    // as_of the second publication, or a date in the future: today's data.
    assert_eq!(daily(&app, &key, json!({"as_of": p2})).await, daily_2);
    assert_eq!(
        daily(&app, &key, json!({"as_of": "2099-12-31"})).await,
        daily_2
    );
    assert_eq!(
        quotes(&app, &key, json!({"as_of": "20991231"})).await,
        quotes_2
    );

    // updated_since the first publication: exactly the revised rows...
    let since = daily(&app, &key, json!({"updated_since": p1})).await;
    let since_keys: BTreeSet<(String, String)> = since.iter().map(key_of).collect();
    assert_eq!(since_keys, revised);
    // ...and the corrected quote's whole day, the unchanged 8x H200 with it (keeping
    // its publication), not the GPU day sent again unchanged.
    let since_quotes = quotes(&app, &key, json!({"updated_since": p1})).await;
    let cells: Vec<(String, String, String)> = since_quotes
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().into(),
                r[2].as_str().unwrap().into(),
                r[5].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("20261103".into(), "8x H100".into(), p2.clone()),
            ("20261103".into(), "8x H200".into(), p1.clone()),
        ]
    );
    // Nothing after the second; the window (p1, p1] is empty.
    assert!(daily(&app, &key, json!({"updated_since": p2}))
        .await
        .is_empty());
    assert!(daily(&app, &key, json!({"updated_since": p1, "as_of": p1}))
        .await
        .is_empty());
    assert_eq!(
        quotes(&app, &key, json!({"updated_since": p1, "as_of": p2})).await,
        since_quotes
    );

    // History holds only what changed: the corrected quote and the revised rows (the
    // GPU day and the 8x H200 quote sent again unchanged are not new versions).
    let count = |table: &'static str| {
        let db = &app.db;
        async move {
            let sql = format!("SELECT count(*) FROM {table}");
            db.query_one(&sql, &[]).await.unwrap().get::<_, i64>(0)
        }
    };
    assert_eq!(count("index_quotes_history").await, 1);
    assert_eq!(count("index_daily_history").await, revised.len() as i64);

    // The back office lists what each import changed, newest first.
    let list = app.imports(&admin, "").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    let newest = &list.data()[0];
    assert_eq!(newest["published_at"], p2.as_str());
    assert!(newest["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["index_code"] == "Server_Index" && c["quote_days_replaced"] == 1));
    let id = second.data()["import_id"].as_str().unwrap().to_string();
    let detail = app.import_detail(&admin, &id).await;
    let changes: BTreeMap<String, Value> = detail.data()["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["index_code"].as_str().unwrap().to_string(), c.clone()))
        .collect();
    assert_eq!(changes["Server_Index"]["quote_days_replaced"], 1);
    assert_eq!(
        changes["Server_Index"]["daily_rows_revised"],
        revised_of("Server_Index")
    );
    assert_eq!(changes["GPU_Index"]["quote_days_replaced"], 1);
    assert_eq!(changes["GPU_Index"]["daily_rows_revised"], 0);
    assert_eq!(
        changes["Hardware_Index"]["daily_rows_revised"],
        revised_of("Hardware_Index")
    );
}

#[actix_web::test]
async fn a_dropped_specification_leaves_the_day_and_stays_in_its_past() {
    let (app, admin, key) = spawn().await;
    let first = first_file();
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first).await);
    // 20261105's Server_Index again, with 8x H200 alone.
    let day = vec![quote("20261105", "Server_Index", "8x H200", "1", "1047")];
    let p2 = published_at(&import(&app, &admin, "quotes.csv", &day).await);

    let server = json!({"index_code": "Server_Index", "trade_date": "20261105"});
    let now: Vec<Value> = quotes(&app, &key, server.clone()).await;
    assert_eq!(now.len(), 1);
    assert_eq!(now[0][2], "8x H200");
    assert_eq!(now[0][5], p2.as_str());
    let mut past = server.clone();
    past["as_of"] = json!(p1);
    let then = quotes(&app, &key, past).await;
    let specs: Vec<&str> = then.iter().map(|r| r[2].as_str().unwrap()).collect();
    assert_eq!(specs, ["8x H100", "8x H200"]);
    // A sync replaces the day whole: the one row left.
    let since = quotes(&app, &key, json!({"updated_since": p1})).await;
    assert_eq!(since, now);
}

#[actix_web::test]
async fn bad_instants_are_refused_with_the_parameter_named() {
    let (app, _admin, key) = spawn().await;
    for (params, name) in [
        (json!({"as_of": "2026-13-01"}), "as_of"),
        (json!({"as_of": "2026-11-20T10:00:00"}), "as_of"),
        (json!({"as_of": "yesterday"}), "as_of"),
        (json!({"updated_since": "20261120"}), "updated_since"),
        (
            json!({"updated_since": "2026-11-20 10:00"}),
            "updated_since",
        ),
    ] {
        let reply = app
            .query_with(
                json!({"api_name": "index_daily", "params": params}),
                Some(&key.key),
            )
            .await;
        reply.assert_error(400, 40001);
        assert!(reply.message().contains(name), "{}", reply.body);
    }
    // Datasets without history do not take them.
    let reply = app
        .query_with(
            json!({"api_name": "trade_calendar", "params": {"as_of": "20261120"}}),
            Some(&key.key),
        )
        .await;
    reply.assert_error(400, 40001);
    // Offsets other than Z are the same instant.
    let utc = daily(&app, &key, json!({"as_of": "2026-11-20T02:00:00Z"})).await;
    let shanghai = daily(&app, &key, json!({"as_of": "2026-11-20T10:00:00+08:00"})).await;
    assert_eq!(utc, shanghai);
}

#[actix_web::test]
async fn a_second_instance_sees_a_correction_within_a_second_and_its_past_forever() {
    let (a, admin, key) = spawn().await;
    let b = a.another_instance().await;
    let first = first_file();
    let p1 = published_at(&import(&a, &admin, "quotes.csv", &first).await);
    // b caches today's page and the page as of p1.
    let today_1 = daily(&b, &key, json!({"index_code": "Server_Index"})).await;
    let as_of_1 = daily(&b, &key, json!({"index_code": "Server_Index", "as_of": p1})).await;
    assert_eq!(today_1, as_of_1);

    let correction = vec![
        quote("20261104", "Server_Index", "8x H100", "0.5", "999"),
        quote("20261104", "Server_Index", "8x H200", "0.5", "1001"),
    ];
    import(&a, &admin, "quotes.csv", &correction).await;
    let changed = eventually(Duration::from_secs(1), || async {
        daily(&b, &key, json!({"index_code": "Server_Index"})).await != today_1
    })
    .await;
    assert!(changed, "instance b still answers the old values");
    assert_eq!(
        daily(&b, &key, json!({"index_code": "Server_Index", "as_of": p1})).await,
        as_of_1
    );
    assert_eq!(
        daily(&a, &key, json!({"index_code": "Server_Index"})).await,
        daily(&b, &key, json!({"index_code": "Server_Index"})).await
    );
}

/// The weekdays of the calendar the delayed-sync test builds around the real today.
const CALENDAR_AROUND_TODAY: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series(current_date - 40, current_date + 40, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

/// The free tier's cutoff (7 open days back, weekdays only) on `day`.
fn weekday_cutoff(day: NaiveDate, delay: usize) -> NaiveDate {
    let mut open = Vec::new();
    let mut d = day;
    while open.len() <= delay {
        if !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
            open.push(d);
        }
        d = d.pred_opt().unwrap();
    }
    open[delay]
}

#[actix_web::test]
async fn a_delayed_sync_gets_the_days_that_entered_its_window_since() {
    let app = spawn_with(Spawn {
        setup_sql: CALENDAR_AROUND_TODAY,
        ..Spawn::default()
    })
    .await;
    let admin = app.admin().await;
    let free = app.key_of_tier(&admin, "fred", "free").await;
    let tz = chrono_tz::Asia::Shanghai;
    let today = Utc::now().with_timezone(&tz).date_naive();
    // Server_Index on every weekday of the last four weeks, published now.
    let mut file = Vec::new();
    let mut day = today - Days::days(28);
    while day < today {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            let date = day.format("%Y%m%d").to_string();
            file.push(quote(&date, "Server_Index", "8x H100", "1", "250000"));
        }
        day += Days::days(1);
    }
    let published = instant(&published_at(
        &import(&app, &admin, "quotes.csv", &file).await,
    ));
    // A sync at `since`; four days later the window has moved on.
    let since = published + Days::seconds(1);
    app.clock.set(since + Days::days(4));
    let since_day = since.with_timezone(&tz).date_naive();
    let from = weekday_cutoff(since_day, 7);
    let to = weekday_cutoff(since_day + Days::days(4), 7);
    assert!(from < to);

    let fields = ["trade_date", "index_code", "index_value"];
    let params = json!({"index_code": "Server_Index", "updated_since": rfc3339(since)});
    let got: Vec<String> = rows(&app, &free, "index_daily", &fields, params)
        .await
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = file
        .iter()
        .map(|q| NaiveDate::parse_from_str(&q.0, "%Y%m%d").unwrap())
        .filter(|d| *d > from && *d <= to)
        .map(|d| d.format("%Y%m%d").to_string())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
    // The same for quotes, by day.
    let params = json!({"index_code": "Server_Index", "updated_since": rfc3339(since)});
    let reply = app
        .query_with(
            json!({"api_name": "index_quote", "params": params}),
            Some(&free.key),
        )
        .await;
    // Server_Index is `aggregate`: its quotes are open to every key.
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let dates: Vec<String> = reply
        .column("trade_date")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(dates, expected);
}

/// One random import: a price per (day, base) it replaces.
fn import_strategy() -> impl Strategy<Value = Vec<(usize, usize, u32)>> {
    prop::collection::vec((0..DAYS.len(), 0..BASES.len(), 1u32..4), 1..6)
}

#[actix_web::test]
async fn as_of_each_publication_answers_what_a_plain_query_answered_right_after_it() {
    let (app, admin, key) = spawn().await;
    import(&app, &admin, "quotes.csv", &first_file()).await;
    let mut runner = TestRunner::deterministic();
    let sequence = prop::collection::vec(import_strategy(), 4..6)
        .new_tree(&mut runner)
        .expect("a sequence")
        .current();
    let mut seen: Vec<(String, Vec<Value>, Vec<Value>)> = Vec::new();
    for changes in sequence {
        let mut file: BTreeMap<(usize, usize), u32> = BTreeMap::new();
        for (day, base, step) in changes {
            file.insert((day, base), step);
        }
        let quotes_file: Vec<Quote> = file
            .iter()
            .map(|(&(day, base), &step)| {
                let price = 1000 * (base as u32 + 1) + 5 * step + day as u32;
                quote(DAYS[day], BASES[base], "unit", "1", &price.to_string())
            })
            .collect();
        let published = published_at(&import(&app, &admin, "quotes.csv", &quotes_file).await);
        seen.push((
            published,
            daily(&app, &key, json!({})).await,
            quotes(&app, &key, json!({})).await,
        ));
    }
    for (published, daily_then, quotes_then) in &seen {
        assert_eq!(
            &daily(&app, &key, json!({"as_of": published})).await,
            daily_then
        );
        assert_eq!(
            &quotes(&app, &key, json!({"as_of": published})).await,
            quotes_then
        );
    }
}
