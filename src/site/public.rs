//! The public pages: home, one page per index, the trading calendar, the methodology,
//! the plans and example code. Each shows what the caller's website identity may see
//! (a visitor: the free tier's; a member: their tier's) and nothing more.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{Datelike, Months, NaiveDate, TimeDelta};
use iq_actors::caller::Tier;
use serde::Deserialize;
use serde_json::json;

use super::calendar_grid::{self, Month};
use super::chart::{self, FULL, SPARKLINE};
use super::chrome::Chrome;
use super::format::{delay, direction, long_date, parse_wire, wire};
use super::reading::{read, Reading, Row};
use super::respond::{render, Caching, PageError, PageResult};
use crate::routes::AppState;

/// Visitors share their pages; a member's are theirs alone.
fn caching(reading: &Reading) -> Caching {
    if reading.signed_in() {
        Caching::Private
    } else {
        Caching::Visitor
    }
}

fn chrome(req: &HttpRequest, state: &AppState, reading: &Reading, nav: &'static str) -> Chrome {
    Chrome::new(req, state, reading.membership.user.as_ref(), nav)
}

/// "Data as of ..." for the caller, and what a better plan would show.
pub struct Freshness {
    pub cutoff_long: String,
    pub cutoff_wire: String,
    pub delay: String,
    /// "Members on the pro plan see ..." when some plan sees fresher data.
    pub better: Option<String>,
}

fn freshness(reading: &Reading) -> Freshness {
    let membership = &reading.membership;
    let cutoff = membership.data_cutoff.as_deref().and_then(parse_wire);
    let better = reading
        .tiers
        .iter()
        .filter(|t| t.delay_days < membership.delay_days)
        .min_by_key(|t| t.delay_days)
        .map(|t| match t.delay_days {
            0 => format!("members on the {} plan see today's", t.name),
            n => format!("members on the {} plan see {}", t.name, delay(n)),
        });
    Freshness {
        cutoff_long: cutoff
            .map(long_date)
            .unwrap_or_else(|| "no data yet".into()),
        cutoff_wire: cutoff.map(wire).unwrap_or_default(),
        delay: delay(membership.delay_days),
        better,
    }
}

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
}

/// How far back the home page's small charts reach (calendar days, before the cutoff).
const SPARK_DAYS: i64 = 90;
/// Points in a small chart at most.
const SPARK_POINTS: usize = 30;

/// `GET /`: every visible index with its latest value and a small chart.
pub async fn home(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let pages = state.site.visitor_pages.clone();
    pages
        .serve(&req, &state, || render_home(&req, &state))
        .await
}

async fn render_home(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let since = state.site.today() - TimeDelta::days(SPARK_DAYS);
    let reading = read(
        req,
        state,
        vec![
            json!({"api_name": "index_basic", "fields": ["index_code", "index_name"]}),
            json!({"api_name": "index_latest"}),
            json!({"api_name": "index_daily",
                   "params": {"start_date": wire(since)},
                   "fields": ["trade_date", "index_code", "index_value"],
                   "limit": 5000}),
        ],
    )
    .await?;
    let names: BTreeMap<String, String> = reading
        .table(0)?
        .rows()
        .map(|r| (r.text("index_code"), r.text("index_name")))
        .collect();
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
        change,
        pct_change: row.text("pct_change"),
        spark: spark.unwrap_or_default(),
    }
}

/// A chart's time range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Range {
    OneMonth,
    ThreeMonths,
    OneYear,
    All,
}

impl Range {
    const ALL: [Range; 4] = [
        Range::OneMonth,
        Range::ThreeMonths,
        Range::OneYear,
        Range::All,
    ];

    fn parse(text: Option<&str>) -> Result<Range, PageError> {
        match text.unwrap_or("3M") {
            "1M" => Ok(Range::OneMonth),
            "3M" => Ok(Range::ThreeMonths),
            "1Y" => Ok(Range::OneYear),
            "all" => Ok(Range::All),
            _ => Err(PageError::bad_request(
                "The range must be one of 1M, 3M, 1Y or all.",
            )),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Range::OneMonth => "1M",
            Range::ThreeMonths => "3M",
            Range::OneYear => "1Y",
            Range::All => "all",
        }
    }

    fn months(self) -> Option<u32> {
        match self {
            Range::OneMonth => Some(1),
            Range::ThreeMonths => Some(3),
            Range::OneYear => Some(12),
            Range::All => None,
        }
    }
}

#[derive(Deserialize)]
pub struct IndexQuery {
    range: Option<String>,
    page: Option<u32>,
}

pub struct RangeLink {
    pub label: &'static str,
    pub current: bool,
}

pub struct DailyRow {
    pub date_long: String,
    pub date_wire: String,
    pub value: String,
    pub weighted_price: String,
    pub change: String,
    pub pct_change: String,
    pub direction: &'static str,
}

pub struct QuoteRow {
    pub specification: String,
    pub weight: String,
    pub price: String,
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexPage {
    chrome: Chrome,
    fresh: Freshness,
    code: String,
    name: String,
    description: String,
    visibility: String,
    aggregate: bool,
    range: &'static str,
    ranges: Vec<RangeLink>,
    chart: String,
    rows: Vec<DailyRow>,
    page: u32,
    pages: u32,
    quotes_date_long: String,
    quotes_date_wire: String,
    weighted_price: String,
    quotes: Vec<QuoteRow>,
}

/// Rows of the daily table per page.
const TABLE_ROWS: usize = 20;
/// The most rows one index page reads for its chart (pages of the API's maximum).
const MAX_CHART_PAGES: usize = 10;

/// `GET /indexes/{code}`: the index's chart over a range, its daily values, and for an
/// `aggregate` index the specification quotes of its latest visible day.
pub async fn index(
    req: HttpRequest,
    code: web::Path<String>,
    query: web::Query<IndexQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let pages = state.site.visitor_pages.clone();
    pages
        .serve(&req, &state, || render_index(&req, &code, &query, &state))
        .await
}

async fn render_index(
    req: &HttpRequest,
    code: &str,
    query: &IndexQuery,
    state: &web::Data<AppState>,
) -> PageResult {
    let range = Range::parse(query.range.as_deref())?;
    let code = code.to_owned();
    if code.is_empty() || code.len() > 64 || code.contains('\0') {
        return Err(PageError::not_found("There is no such index."));
    }
    // A little before the range, so the delay never leaves the range short.
    let since = range.months().map(|m| {
        let today = state.site.today();
        today.checked_sub_months(Months::new(m)).unwrap_or(today) - TimeDelta::days(31)
    });
    let daily = |offset: usize| {
        let mut params = json!({"index_code": code});
        if let Some(since) = since {
            params["start_date"] = json!(wire(since));
        }
        json!({"api_name": "index_daily", "params": params, "limit": 5000, "offset": offset})
    };
    let reading = read(
        req,
        state,
        vec![
            json!({"api_name": "index_basic", "params": {"index_code": code}}),
            daily(0),
        ],
    )
    .await?;
    let basic = reading.table(0).map_err(|e| {
        if e.status == StatusCode::FORBIDDEN {
            PageError::forbidden(format!(
                "{code} is for members whose plan includes member indexes: see the plans."
            ))
        } else {
            e
        }
    })?;
    let Some(info) = basic.rows().next() else {
        return Err(PageError::not_found(format!(
            "No index named {code} is visible to you. Member indexes need a plan that \
             includes them: see the plans."
        )));
    };
    let mut series = reading.table(1)?;
    // "all" may be longer than one answer: read on while there is more, up to a bound.
    let mut pages = 1;
    while series.has_more && pages < MAX_CHART_PAGES {
        let more = read(req, state, vec![daily(series.items.len())]).await?;
        let next = more.table(0)?;
        series.has_more = next.has_more;
        series.items.extend(next.items);
        pages += 1;
    }
    let mut points: Vec<(NaiveDate, String)> = Vec::new();
    let mut rows: Vec<DailyRow> = Vec::new();
    let last = series
        .rows()
        .last()
        .and_then(|r| parse_wire(&r.text("trade_date")));
    let start = match (range.months(), last) {
        (Some(m), Some(last)) => last.checked_sub_months(Months::new(m)),
        _ => None,
    };
    for row in series.rows() {
        let Some(date) = parse_wire(&row.text("trade_date")) else {
            continue;
        };
        if start.is_some_and(|start| date <= start) {
            continue;
        }
        points.push((date, row.text("index_value")));
        let change = row.text("change");
        rows.push(DailyRow {
            date_long: long_date(date),
            date_wire: wire(date),
            value: row.text("index_value"),
            weighted_price: row.get("weighted_price").unwrap_or_else(|| "–".into()),
            direction: direction(&change),
            change,
            pct_change: row.text("pct_change"),
        });
    }
    rows.reverse();
    let page_count = rows.len().div_ceil(TABLE_ROWS).max(1) as u32;
    let page = query.page.unwrap_or(1).clamp(1, page_count);
    let shown: Vec<DailyRow> = rows
        .into_iter()
        .skip((page as usize - 1) * TABLE_ROWS)
        .take(TABLE_ROWS)
        .collect();
    let name = info.text("index_name");
    let visibility = info.text("visibility");
    let aggregate = visibility == "aggregate";
    // The quotes of the latest visible day, for indexes that publish them.
    let (mut quotes, mut weighted_price) = (Vec::new(), String::new());
    if let (true, Some(last)) = (aggregate, last) {
        let detail = read(
            req,
            state,
            vec![json!({"api_name": "index_quote",
                        "params": {"index_code": code, "trade_date": wire(last)},
                        "limit": 5000})],
        )
        .await?;
        quotes = detail
            .table(0)?
            .rows()
            .map(|r| QuoteRow {
                specification: r.text("specification"),
                weight: r.text("weight"),
                price: r.text("price"),
            })
            .collect();
        weighted_price = series
            .rows()
            .last()
            .and_then(|r| r.get("weighted_price"))
            .unwrap_or_default();
    }
    let chart =
        chart::line(&points, FULL, &format!("{name} ({code}), index points")).unwrap_or_default();
    let page = IndexPage {
        chrome: chrome(req, state, &reading, "home"),
        fresh: freshness(&reading),
        description: info.text("description"),
        code,
        name,
        visibility,
        aggregate,
        range: range.label(),
        ranges: Range::ALL
            .iter()
            .map(|r| RangeLink {
                label: r.label(),
                current: *r == range,
            })
            .collect(),
        chart,
        rows: shown,
        page,
        pages: page_count,
        quotes_date_long: last.map(long_date).unwrap_or_default(),
        quotes_date_wire: last.map(wire).unwrap_or_default(),
        weighted_price,
        quotes,
    };
    render(&page, StatusCode::OK, caching(&reading))
}

#[derive(Deserialize)]
pub struct CalendarQuery {
    year: Option<i32>,
}

#[derive(Template)]
#[template(path = "calendar.html")]
struct CalendarPage {
    chrome: Chrome,
    year: i32,
    months: Vec<Month>,
    open_days: usize,
}

/// `GET /calendar?year=YYYY`: a year of open and closed trading days.
pub async fn calendar(
    req: HttpRequest,
    query: web::Query<CalendarQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let pages = state.site.visitor_pages.clone();
    pages
        .serve(&req, &state, || render_calendar(&req, &query, &state))
        .await
}

async fn render_calendar(
    req: &HttpRequest,
    query: &CalendarQuery,
    state: &web::Data<AppState>,
) -> PageResult {
    let year =
        calendar_grid::checked_year(query.year.unwrap_or_else(|| state.site.today().year()))?;
    let (reading, open) = calendar_grid::open_days(req, state, year).await?;
    let months = calendar_grid::year(year, &open);
    let page = CalendarPage {
        chrome: chrome(req, state, &reading, "calendar"),
        year,
        open_days: open.len(),
        months,
    };
    render(&page, StatusCode::OK, caching(&reading))
}

#[derive(Template)]
#[template(path = "methodology.html")]
struct Methodology {
    chrome: Chrome,
    tiers: Vec<Tier>,
}

/// `GET /methodology`: how the numbers are made, in words and formulas.
pub async fn methodology(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let pages = state.site.visitor_pages.clone();
    pages
        .serve(&req, &state, || render_methodology(&req, &state))
        .await
}

async fn render_methodology(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let reading = read(req, state, Vec::new()).await?;
    let page = Methodology {
        chrome: chrome(req, state, &reading, "methodology"),
        tiers: reading.tiers.to_vec(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}

pub struct Plan {
    pub name: String,
    pub per_minute: i64,
    pub per_day: i64,
    pub max_rows: u32,
    pub max_keys: String,
    pub delay: String,
    pub member_indexes: bool,
    pub yours: bool,
}

#[derive(Template)]
#[template(path = "plans.html")]
struct Plans {
    chrome: Chrome,
    plans: Vec<Plan>,
}

/// `GET /plans`: the tiers exactly as the super administrator set them.
pub async fn plans(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let pages = state.site.visitor_pages.clone();
    pages
        .serve(&req, &state, || render_plans(&req, &state))
        .await
}

async fn render_plans(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let reading = read(req, state, Vec::new()).await?;
    let yours = reading.signed_in().then(|| reading.membership.tier.clone());
    let plans = reading
        .tiers
        .iter()
        .map(|t| Plan {
            name: t.name.clone(),
            per_minute: t.per_minute,
            per_day: t.per_day,
            max_rows: t.max_rows,
            max_keys: t
                .max_keys
                .map_or_else(|| "unlimited".to_owned(), |n| n.to_string()),
            delay: delay(t.delay_days),
            member_indexes: t.member_indexes,
            yours: yours.as_deref() == Some(t.name.as_str()),
        })
        .collect();
    let page = Plans {
        chrome: chrome(req, state, &reading, "plans"),
        plans,
    };
    render(&page, StatusCode::OK, caching(&reading))
}

#[derive(Template)]
#[template(path = "examples.html")]
struct Examples {
    chrome: Chrome,
    base_url: String,
    index_code: String,
    end_date: String,
    datasets: Vec<&'static str>,
    signed_in: bool,
}

/// `GET /examples`: curl and Python for the caller's own datasets and indexes.
pub async fn examples(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    let info = req.connection_info();
    let page = Examples {
        chrome: chrome(&req, &state, &reading, "examples"),
        base_url: format!("{}://{}", info.scheme(), info.host()),
        index_code: reading
            .membership
            .indexes
            .first()
            .cloned()
            .unwrap_or_else(|| "GPU_Index".into()),
        end_date: reading.membership.data_cutoff.clone().unwrap_or_default(),
        datasets: iq_actors::catalogue::api_names(),
        signed_in: reading.signed_in(),
    };
    render(&page, StatusCode::OK, caching(&reading))
}
