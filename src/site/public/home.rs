//! `GET /`: the home page, every visible index with its latest value and a small
//! chart. It must never show an index or a day the caller's queries did not return.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{NaiveDate, TimeDelta};

use super::{cached, caching, chrome, freshness, Freshness};
use crate::site::chart::{self, SPARKLINE};
use crate::site::chrome::Chrome;
use crate::site::format::{direction, is_past, local_time, long_date, parse_wire, signed, wire};
use crate::site::reading::{read, Read, Row};
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

pub struct IndexCard {
    pub code: String,
    pub name: String,
    pub date_long: String,
    pub date_wire: String,
    pub value: String,
    pub change: String,
    pub pct_change: String,
    pub direction: &'static str,
    pub spark: String,
}

#[derive(Template)]
#[template(path = "home.html")]
struct Home {
    chrome: Chrome,
    fresh: Freshness,
    cards: Vec<IndexCard>,
    /// When the next values come, readable in the service time zone; empty when no
    /// index has a publication ahead.
    next_publication: String,
}

/// How far back the home page's small charts reach (calendar days, before the cutoff).
const SPARK_DAYS: i64 = 90;
/// Points in a small chart at most.
const SPARK_POINTS: usize = 30;

/// `GET /`: every visible index with its latest value and a small chart.
pub async fn home(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    cached(&req, &state, || render_home(&req, &state)).await
}

async fn render_home(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let since = state.site.today() - TimeDelta::days(SPARK_DAYS);
    let reading = read(
        req,
        state,
        vec![
            Read::of("index_basic").fields(&["index_code", "index_name", "next_publication_at"]),
            Read::of("index_latest"),
            Read::of("index_daily")
                .day("start_date", Some(since))
                .fields(&["trade_date", "index_code", "index_value"])
                .whole(),
        ],
    )
    .await?;
    let basic = reading.table(0)?;
    let names: BTreeMap<String, String> = basic
        .rows()
        .map(|r| (r.text("index_code"), r.text("index_name")))
        .collect();
    // The earliest of the indexes' next publications still ahead (RFC 3339 in UTC sorts
    // as text); one whose time has passed is an index whose values are late.
    let now = state.site.clock.now();
    let next_publication = basic
        .rows()
        .filter_map(|r| r.get("next_publication_at"))
        .filter(|at| !is_past(at, now))
        .min()
        .map(|at| local_time(&at, state.site.service_tz))
        .unwrap_or_default();
    let mut history: BTreeMap<String, Vec<(NaiveDate, String)>> = BTreeMap::new();
    for row in reading.table(2)?.rows() {
        if let Some(date) = parse_wire(&row.text("trade_date")) {
            history
                .entry(row.text("index_code"))
                .or_default()
                .push((date, row.text("index_value")));
        }
    }
    let cards = reading
        .table(1)?
        .rows()
        .map(|row| {
            let code = row.text("index_code");
            let series = history.remove(&code).unwrap_or_default();
            let recent = &series[series.len().saturating_sub(SPARK_POINTS)..];
            card(
                &row,
                names.get(&code),
                chart::line(recent, SPARKLINE, &code),
            )
        })
        .collect();
    let page = Home {
        chrome: chrome(req, state, &reading, "home"),
        fresh: freshness(&reading),
        cards,
        next_publication,
    };
    render(&page, StatusCode::OK, caching(&reading))
}

fn card(row: &Row<'_>, name: Option<&String>, spark: Option<String>) -> IndexCard {
    let code = row.text("index_code");
    let date = parse_wire(&row.text("trade_date"));
    let change = row.text("change");
    IndexCard {
        name: name.cloned().unwrap_or_else(|| code.clone()),
        code,
        date_long: date.map(long_date).unwrap_or_default(),
        date_wire: date.map(wire).unwrap_or_default(),
        value: row.text("index_value"),
        direction: direction(&change),
        change: signed(&change),
        pct_change: signed(&row.text("pct_change")),
        spark: spark.unwrap_or_default(),
    }
}
