//! Point-in-time history (D17), from outside: import, correct a past day, re-import;
//! then `as_of` before the correction answers the original quotes, index values and
//! composite, `as_of` after it the new ones; `updated_since` answers exactly what was
//! revised (quotes by whole day); unchanged rows keep their `published_at`; a delayed
//! caller's sync misses no row that entered its window late; two instances agree.
//!
//! Random sequences of imports check the defining property: `as_of` at each import's
//! publication equals what a plain query answered right after that import.
//!
//! Files: `correction.rs` (a correction read back as of before and after, and since),
//! `edges.rs` (a dropped specification, bad instants, a second instance),
//! `delayed_sync.rs` (a delayed caller's sync), `property.rs` (random sequences),
//! `revisions.rs` (D21: what corrections revised, for each caller), `reasons.rs` (D26:
//! a correction's note as the reason of its revisions), `restatement.rs` (D26: the
//! migration to levels as ratios, published as one vintage), `demo.rs` (D26: the
//! demo's past).
//! The steps they share are here.

mod correction;
mod delayed_sync;
mod demo;
mod edges;
mod property;
mod reasons;
mod restatement;
mod revisions;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::helpers::quotes::BASES;
use crate::helpers::{spawn_with_sql, Key, Reply, TestApp};

/// Weekdays 2026-11-02 .. 2026-11-30.
pub(super) const DAYS: [&str; 5] = ["20261102", "20261103", "20261104", "20261105", "20261106"];

/// (trade_date, index_code, specification, weight, price)
pub(super) type Quote = (String, String, String, String, String);

pub(super) fn quote(date: &str, code: &str, spec: &str, weight: &str, price: &str) -> Quote {
    (
        date.into(),
        code.into(),
        spec.into(),
        weight.into(),
        price.into(),
    )
}

/// Every base on every day of [`DAYS`]; Server_Index with two specifications.
pub(super) fn first_file() -> Vec<Quote> {
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

pub(super) fn published_at(reply: &Reply) -> String {
    reply.data()["published_at"]
        .as_str()
        .unwrap_or_else(|| panic!("no published_at: {}", reply.body))
        .to_string()
}

pub(super) fn instant(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .with_timezone(&Utc)
}

pub(super) fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

pub(super) const DAILY_FIELDS: [&str; 7] = [
    "trade_date",
    "index_code",
    "index_value",
    "pre_value",
    "change",
    "pct_change",
    "published_at",
];
pub(super) const QUOTE_FIELDS: [&str; 6] = [
    "trade_date",
    "index_code",
    "specification",
    "weight",
    "price",
    "published_at",
];

/// Every row of `api_name` with `fields` and `params`, read by `key`.
pub(super) async fn rows(
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

pub(super) async fn daily(app: &TestApp, key: &Key, params: Value) -> Vec<Value> {
    rows(app, key, "index_daily", &DAILY_FIELDS, params).await
}

pub(super) async fn quotes(app: &TestApp, key: &Key, params: Value) -> Vec<Value> {
    rows(app, key, "index_quote", &QUOTE_FIELDS, params).await
}

/// A row without its last cell (`published_at`).
pub(super) fn values(row: &Value) -> Vec<Value> {
    let cells = row.as_array().expect("row");
    cells[..cells.len() - 1].to_vec()
}

pub(super) fn key_of(row: &Value) -> (String, String) {
    (
        row[0].as_str().unwrap().to_string(),
        row[1].as_str().unwrap().to_string(),
    )
}

pub(super) use crate::helpers::quotes::spawn_for_imports as spawn;
