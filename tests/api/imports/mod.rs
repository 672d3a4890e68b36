//! Quote imports (D8): `POST /api/v1/admin/imports` end to end. Expected index values
//! are computed here, with the test's own decimal arithmetic, never the service's.
//!
//! A file per outcome: `accepted` (what an accepted file stores and recalculates, from a
//! CSV file or a workbook), `refused` (every bad row listed, nothing stored, who may
//! import what) and `service` (one import at a time, other instances, the demo data).
//! Files are sent with the harness's `TestApp::import_file`. The service and the
//! readings they share are here: a calendar of ten open days, [`THREE_DAYS`] of quotes,
//! the index values as a visitor sees them and as stored, and the rounding.

mod accepted;
mod refused;
mod service;

use rust_decimal::prelude::*;
use rust_decimal::RoundingStrategy;
use serde_json::{json, Value};

use crate::helpers::{spawn_with_sql, Reply, Session, TestApp};

/// The open days of [`CALENDAR`], as files write them.
const OPEN_DAYS: [&str; 10] = [
    "20261102", "20261103", "20261104", "20261105", "20261106", "20261109", "20261110", "20261111",
    "20261112", "20261113",
];

/// Weekdays 2026-11-02 .. 2026-11-13: the calendar, and nothing else.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-13'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

pub(crate) async fn spawn() -> TestApp {
    spawn_with_sql(CALENDAR).await
}

/// A fresh service whose quotes are [`THREE_DAYS`], imported by its admin.
async fn spawn_with_three_days() -> (TestApp, Session) {
    let app = spawn().await;
    let admin = app.admin().await;
    import_three_days(&app, &admin).await;
    (app, admin)
}

/// [`THREE_DAYS`] imported by `admin`, asserting that it was accepted.
async fn import_three_days(app: &TestApp, admin: &Session) -> Reply {
    let reply = app
        .import_file(admin, "quotes.csv", THREE_DAYS.into())
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply
}

fn round6(x: Decimal) -> Decimal {
    x.round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero)
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

/// `index_daily` of one index as the visitor sees it: (date, value, weighted price, pct).
async fn daily(app: &TestApp, code: &str) -> Vec<(String, Decimal, Decimal, Option<Decimal>)> {
    let reply = app
        .query(
            json!({"api_name": "index_daily", "params": {"index_code": code},
                      "fields": ["trade_date", "index_value", "weighted_price", "pct_change"]}),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply
        .items()
        .iter()
        .map(|row| {
            let num = |v: &Value| v.as_str().map(dec);
            (
                row[0].as_str().unwrap().to_string(),
                num(&row[1]).unwrap(),
                num(&row[2]).unwrap(),
                num(&row[3]),
            )
        })
        .collect()
}

/// `index_daily` of one index as stored, every day (no delay, no tier): (date, value,
/// weighted price).
async fn stored_daily(app: &TestApp, code: &str) -> Vec<(String, Decimal, Decimal)> {
    app.db
        .query(
            "SELECT to_char(trade_date, 'YYYYMMDD'), index_value, weighted_price \
             FROM index_daily WHERE index_code = $1 ORDER BY trade_date",
            &[&code],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

const THREE_DAYS: &str = "trade_date,index_code,specification,weight,price\n\
    20261102,Server_Index,8x H100,0.5,100\n\
    20261102,Server_Index,8x H200,0.5,200\n\
    20261103,Server_Index,8x H100,0.5,110\n\
    20261103,Server_Index,8x H200,0.5,200\n\
    20261104,Server_Index,8x H100,0.6,120.123457\n\
    20261104,Server_Index,8x H200,0.4,190\n";
