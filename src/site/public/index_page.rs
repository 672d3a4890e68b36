//! `GET /indexes/{code}`: one index's page, its facts, its chart over a range, its daily
//! values a page at a time, its latest revisions, and for an `aggregate` index the
//! specification quotes of its latest visible day. With `as_of` (and `day`) the values
//! are those that stood at that instant (up to that day), as a revision's link opens
//! them. A member index the caller's plan does not cover is a 403 page, an index the
//! caller cannot see a 404; it must never hint at more than that.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{DateTime, Months, NaiveDate, SecondsFormat, TimeDelta, Utc};
use serde::Deserialize;
use serde_json::json;

use super::{cached, caching, chrome, freshness, Freshness};
use iq_actors::catalogue;

use crate::site::chart::{self, FULL};
use crate::site::chrome::Chrome;
use crate::site::format::{direction, is_past, local_time, long_date, parse_wire, signed, wire};
use crate::site::path_part::PathPart;
use crate::site::reading::read;
use crate::site::respond::{render, PageError, PageResult};
use crate::state::AppState;

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
    /// The instant whose values to show (RFC 3339 with an offset).
    as_of: Option<String>,
    /// With `as_of`: the last day to show (`YYYYMMDD`), the day a revision changed.
    day: Option<String>,
}

/// A past view of the page: the values as they stood at `at`, up to `day`.
struct PastView {
    at: DateTime<Utc>,
    day: Option<NaiveDate>,
}

impl PastView {
    fn parse(query: &IndexQuery) -> Result<Option<PastView>, PageError> {
        let Some(text) = query.as_of.as_deref() else {
            if query.day.is_some() {
                return Err(PageError::bad_request("A day is shown only with as_of."));
            }
            return Ok(None);
        };
        let at = (text.len() <= 64)
            .then(|| DateTime::parse_from_rfc3339(text).ok())
            .flatten()
            .ok_or_else(|| {
                PageError::bad_request(
                    "as_of must be an instant with an offset, such as 2026-11-20T10:00:00Z.",
                )
            })?
            .with_timezone(&Utc);
        let day = match query.day.as_deref() {
            None => None,
            Some(text) => Some(
                parse_wire(text)
                    .ok_or_else(|| PageError::bad_request("The day must be a date as YYYYMMDD."))?,
            ),
        };
        Ok(Some(PastView { at, day }))
    }

    /// The instant as the API writes it, for queries and links.
    fn instant(&self) -> String {
        self.at.to_rfc3339_opts(SecondsFormat::Micros, true)
    }

    /// What links within the page carry to stay in this view.
    fn link_suffix(&self) -> String {
        past_suffix(&self.instant(), self.day)
    }
}

/// The query a link to a past view adds: `&as_of=...&day=...` (`as_of` as the API
/// writes instants, which need no escaping in a query string).
fn past_suffix(as_of: &str, day: Option<NaiveDate>) -> String {
    match day {
        Some(day) => format!("&as_of={as_of}&day={}", wire(day)),
        None => format!("&as_of={as_of}"),
    }
}

/// One revision of the index's values (D21), newest first.
pub struct RevisionRow {
    pub date_long: String,
    pub date_wire: String,
    pub published: String,
    /// The link to the index as it stood before the revision.
    pub before_link: String,
    pub before: String,
    pub after: String,
    pub change: String,
    pub direction: &'static str,
    /// Why, as the correction said (D26); empty when it gave no reason.
    pub reason: String,
}

/// The revisions an index page lists; the API's `index_revisions` has them all.
const REVISION_ROWS: usize = 10;
/// What the revisions list shows: the dataset's default fields (D21) and the reason
/// (D26).
fn revision_fields() -> Vec<&'static str> {
    let defaults = catalogue::dataset("index_revisions").map_or(&[][..], |d| d.default_fields);
    defaults.iter().copied().chain(["reason"]).collect()
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
    facts: Facts,
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
    revisions: Vec<RevisionRow>,
    /// With `as_of`: when the values shown stood, readable; empty for today's.
    past: String,
    /// With `as_of` and a day: why the day's value shown was revised next, if a reason
    /// was given.
    past_reason: String,
    /// What links within the page carry to stay in a past view; empty for today's.
    past_link: String,
}

/// What the facts box shows (D20), read with the index's name and visibility.
const FACT_FIELDS: [&str; 13] = [
    "index_code",
    "index_name",
    "visibility",
    "description",
    "base_date",
    "base_value",
    "currency",
    "price_basis",
    "source",
    "publish_time",
    "methodology_version",
    "latest_trade_date",
    "next_publication_at",
];

/// The facts box: what each number is, and when the next one comes.
pub struct Facts {
    pub currency: String,
    pub price_basis: String,
    pub source: String,
    pub base: String,
    pub publish_time: String,
    pub tz: &'static str,
    pub methodology_version: String,
    /// The latest date with a value this reader may see, readable; empty when none.
    pub latest: String,
    pub next: String,
    /// The next publication's time has passed and its values are not yet in.
    pub overdue: bool,
}

/// Rows of the daily table per page.
const TABLE_ROWS: usize = 20;
/// The most rows one index page reads for its chart (pages of the API's maximum).
const MAX_CHART_PAGES: usize = 10;

/// `GET /indexes/{code}`: the index's chart over a range, its daily values, and for an
/// `aggregate` index the specification quotes of its latest visible day.
pub async fn index(
    req: HttpRequest,
    code: PathPart,
    query: web::Query<IndexQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    cached(&req, &state, || render_index(&req, &code, &query, &state)).await
}

async fn render_index(
    req: &HttpRequest,
    code: &str,
    query: &IndexQuery,
    state: &web::Data<AppState>,
) -> PageResult {
    let range = Range::parse(query.range.as_deref())?;
    let past = PastView::parse(query)?;
    let code = code.to_owned();
    if code.is_empty() || code.len() > 64 || code.contains('\0') {
        return Err(PageError::not_found("There is no such index."));
    }
    // A little before the range, so the delay never leaves the range short; a past
    // view's range ends on its day.
    let end = past.as_ref().and_then(|p| p.day);
    let since = range.months().map(|m| {
        let last = end.unwrap_or_else(|| state.site.today());
        last.checked_sub_months(Months::new(m)).unwrap_or(last) - TimeDelta::days(31)
    });
    let as_of = past.as_ref().map(PastView::instant);
    let daily = |offset: usize| {
        let mut params = json!({"index_code": code});
        if let Some(since) = since {
            params["start_date"] = json!(wire(since));
        }
        if let Some(end) = end {
            params["end_date"] = json!(wire(end));
        }
        if let Some(as_of) = &as_of {
            params["as_of"] = json!(as_of);
        }
        json!({"api_name": "index_daily", "params": params, "limit": 5000, "offset": offset})
    };
    let mut reads = vec![
        json!({"api_name": "index_basic", "params": {"index_code": code},
               "fields": FACT_FIELDS}),
        daily(0),
        json!({"api_name": "index_revisions", "params": {"index_code": code},
               "fields": revision_fields(), "limit": REVISION_ROWS}),
    ];
    // A past view of a day: the revisions of that day published after it, whose
    // earliest (listed last) says why the value shown was replaced.
    if let (Some(as_of), Some(day)) = (&as_of, end) {
        reads.push(json!({"api_name": "index_revisions",
            "params": {"index_code": code, "start_date": wire(day), "end_date": wire(day),
                       "since": as_of},
            "fields": ["reason"], "limit": 100}));
    }
    let reading = read(req, state, reads).await?;
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
            change: signed(&change),
            pct_change: signed(&row.text("pct_change")),
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
        let mut params = json!({"index_code": code, "trade_date": wire(last)});
        if let Some(as_of) = &as_of {
            params["as_of"] = json!(as_of);
        }
        let detail = read(
            req,
            state,
            vec![json!({"api_name": "index_quote", "params": params, "limit": 5000})],
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
    let tz = state.site.service_tz;
    let day = |field: &str| {
        info.get(field)
            .and_then(|d| parse_wire(&d))
            .map(long_date)
            .unwrap_or_default()
    };
    let revisions = reading
        .table(2)?
        .rows()
        .filter_map(|r| {
            let date = parse_wire(&r.text("trade_date"))?;
            let change = r.text("change");
            Some(RevisionRow {
                date_long: long_date(date),
                date_wire: wire(date),
                published: local_time(&r.text("published_at"), tz),
                before_link: format!(
                    "/indexes/{code}?range={}{}",
                    range.label(),
                    past_suffix(&r.text("previous_published_at"), Some(date))
                ),
                before: r.text("previous_value"),
                after: r.text("index_value"),
                direction: direction(&change),
                change: signed(&change),
                reason: r.text("reason"),
            })
        })
        .collect();
    let facts = Facts {
        currency: info.text("currency"),
        price_basis: info.text("price_basis"),
        source: info.text("source"),
        base: format!("{} = {}", day("base_date"), info.text("base_value")),
        publish_time: info.text("publish_time"),
        tz: tz.name(),
        methodology_version: info.text("methodology_version"),
        latest: day("latest_trade_date"),
        next: info
            .get("next_publication_at")
            .map(|at| local_time(&at, tz))
            .unwrap_or_default(),
        overdue: info
            .get("next_publication_at")
            .is_some_and(|at| is_past(&at, state.site.clock.now())),
    };
    let page = IndexPage {
        chrome: chrome(req, state, &reading, "home"),
        fresh: freshness(&reading),
        facts,
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
        revisions,
        past: past
            .as_ref()
            .map(|p| local_time(&p.instant(), tz))
            .unwrap_or_default(),
        past_link: past.as_ref().map(PastView::link_suffix).unwrap_or_default(),
        past_reason: match end.and(as_of) {
            Some(_) => reading
                .table(3)?
                .rows()
                .last()
                .map(|r| r.text("reason"))
                .unwrap_or_default(),
            None => String::new(),
        },
    };
    render(&page, StatusCode::OK, caching(&reading))
}
