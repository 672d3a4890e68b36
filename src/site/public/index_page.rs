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
use chrono_tz::Tz;
use serde::Deserialize;

use super::{cached, caching, chrome, freshness, Freshness};
use iq_actors::catalogue;
use iq_actors::indexes::MAX_CODE_CHARS;
use iq_actors::wire_date::timestamp;

use crate::site::chart::{self, FULL};
use crate::site::chrome::Chrome;
use crate::site::format::{direction, is_past, local_time, long_date, parse_wire, signed, wire};
use crate::site::path_part::PathPart;
use crate::site::reading::{read, read_on, visible_index, Read, Row, Table};
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

    /// The links to every range, this one marked current.
    fn links(self) -> Vec<RangeLink> {
        Range::ALL
            .iter()
            .map(|r| RangeLink {
                label: r.label(),
                current: *r == self,
            })
            .collect()
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
        let at = (text.len() <= MAX_INSTANT_CHARS)
            .then(|| timestamp::parse(text).ok())
            .flatten()
            .ok_or_else(|| {
                PageError::bad_request(
                    "as_of must be an instant with an offset, such as 2026-11-20T10:00:00Z.",
                )
            })?;
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
const REVISION_ROWS: u32 = 10;
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

pub struct DailyTableRow {
    pub date_long: String,
    pub date_wire: String,
    pub value: String,
    pub weighted_price: String,
    pub change: String,
    pub pct_change: String,
    pub direction: &'static str,
}

pub struct QuoteTableRow {
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
    rows: Vec<DailyTableRow>,
    page: u32,
    pages: u32,
    quotes_date_long: String,
    quotes_date_wire: String,
    weighted_price: String,
    quotes: Vec<QuoteTableRow>,
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

/// The longest `as_of` read: an RFC 3339 instant is at most 35 characters.
const MAX_INSTANT_CHARS: usize = 64;
/// The revisions of one day read for a past view's reason: a day is revised a few
/// times at most.
const DAY_REVISIONS: u32 = 100;
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

/// Which values a page shows: an index's, from `since` (a little before the range, so
/// the delay never leaves it short) to `end`, as they stood at `as_of` (a past view).
struct Window {
    code: String,
    since: Option<NaiveDate>,
    end: Option<NaiveDate>,
    as_of: Option<String>,
}

impl Window {
    fn new(code: &str, range: Range, past: Option<&PastView>, today: NaiveDate) -> Window {
        let end = past.and_then(|p| p.day);
        let since = range.months().map(|m| {
            let last = end.unwrap_or(today);
            last.checked_sub_months(Months::new(m)).unwrap_or(last) - TimeDelta::days(31)
        });
        Window {
            code: code.to_owned(),
            since,
            end,
            as_of: past.map(PastView::instant),
        }
    }

    /// The index's own read of `dataset`, as it stood at `as_of` when the page is a
    /// past view.
    fn read(&self, dataset: &'static str) -> Read {
        let read = Read::of(dataset).param("index_code", self.code.as_str());
        match &self.as_of {
            Some(as_of) => read.param("as_of", as_of.as_str()),
            None => read,
        }
    }

    /// The daily values from the `offset`th on.
    fn daily(&self, offset: usize) -> Read {
        self.read("index_daily")
            .day("start_date", self.since)
            .day("end_date", self.end)
            .whole()
            .starting_at(offset)
    }

    /// What the page reads first: the facts, the values, the latest revisions and, for
    /// a past view of a day, the revisions of that day published after it, whose
    /// earliest (listed last) says why the value shown was replaced.
    fn first_reads(&self) -> Vec<Read> {
        let revisions = Read::of("index_revisions").param("index_code", self.code.as_str());
        let mut reads = vec![
            Read::of("index_basic")
                .param("index_code", self.code.as_str())
                .fields(&FACT_FIELDS),
            self.daily(0),
            revisions
                .clone()
                .fields(&revision_fields())
                .limit(REVISION_ROWS),
        ];
        if let (Some(as_of), Some(day)) = (&self.as_of, self.end) {
            reads.push(
                revisions
                    .day("start_date", Some(day))
                    .day("end_date", Some(day))
                    .param("since", as_of.as_str())
                    .fields(&["reason"])
                    .limit(DAY_REVISIONS),
            );
        }
        reads
    }
}

async fn render_index(
    req: &HttpRequest,
    code: &str,
    query: &IndexQuery,
    state: &web::Data<AppState>,
) -> PageResult {
    let range = Range::parse(query.range.as_deref())?;
    let past = PastView::parse(query)?;
    if code.is_empty() || code.len() > MAX_CODE_CHARS || code.contains('\0') {
        return Err(PageError::not_found("There is no such index."));
    }
    let window = Window::new(code, range, past.as_ref(), state.site.today());
    let reading = read(req, state, window.first_reads()).await?;
    let basic = visible_index(reading.table(0), code)?;
    let info = basic.rows().next().ok_or_else(|| {
        PageError::not_found(format!(
            "No index named {code} is visible to you. Member indexes need a plan that \
             includes them: see the plans."
        ))
    })?;
    // "all" may be longer than one answer: read on while there is more, up to a bound.
    let mut series = reading.table(1)?;
    read_on(
        req,
        state,
        &mut series,
        |offset| window.daily(offset),
        MAX_CHART_PAGES,
    )
    .await?;
    let last = series
        .rows()
        .last()
        .and_then(|r| parse_wire(&r.text("trade_date")));
    let (points, rows) = daily_rows(&series, range, last);
    let (shown, page, page_count) = table_page(rows, query.page);
    let name = info.text("index_name");
    let visibility = info.text("visibility");
    let aggregate = visibility == "aggregate";
    // The quotes of the latest visible day, for indexes that publish them.
    let (quotes, weighted_price) = match (aggregate, last) {
        (true, Some(last)) => latest_quotes(req, state, &window, &series, last).await?,
        _ => (Vec::new(), String::new()),
    };
    let chart =
        chart::line(&points, FULL, &format!("{name} ({code}), index points")).unwrap_or_default();
    let tz = state.site.service_tz;
    let page = IndexPage {
        chrome: chrome(req, state, &reading, "home"),
        fresh: freshness(&reading),
        facts: Facts::of(&info, state),
        description: info.text("description"),
        code: code.to_owned(),
        name,
        visibility,
        aggregate,
        range: range.label(),
        ranges: range.links(),
        chart,
        rows: shown,
        page,
        pages: page_count,
        quotes_date_long: last.map(long_date).unwrap_or_default(),
        quotes_date_wire: last.map(wire).unwrap_or_default(),
        weighted_price,
        quotes,
        revisions: revision_rows(&reading.table(2)?, code, range, tz),
        past: past
            .as_ref()
            .map(|p| local_time(&p.instant(), tz))
            .unwrap_or_default(),
        past_link: past.as_ref().map(PastView::link_suffix).unwrap_or_default(),
        past_reason: match window.end.and(window.as_of.as_ref()) {
            Some(_) => last_reason(&reading.table(3)?),
            None => String::new(),
        },
    };
    render(&page, StatusCode::OK, caching(&reading))
}

/// The `asked` page (from 1; clamped) of the table's rows, with its number and the
/// number of pages.
fn table_page(rows: Vec<DailyTableRow>, asked: Option<u32>) -> (Vec<DailyTableRow>, u32, u32) {
    let pages = rows.len().div_ceil(TABLE_ROWS).max(1) as u32;
    let page = asked.unwrap_or(1).clamp(1, pages);
    let shown = rows
        .into_iter()
        .skip((page as usize - 1) * TABLE_ROWS)
        .take(TABLE_ROWS)
        .collect();
    (shown, page, pages)
}

/// The reason of the earliest revision listed (the last row), if it gave one.
fn last_reason(revisions: &Table) -> String {
    revisions
        .rows()
        .last()
        .map(|r| r.text("reason"))
        .unwrap_or_default()
}

/// The chart's points and the table's rows (newest first) of the range: the values
/// after `last` less the range's months (`series` starts a little earlier).
fn daily_rows(
    series: &Table,
    range: Range,
    last: Option<NaiveDate>,
) -> (Vec<(NaiveDate, String)>, Vec<DailyTableRow>) {
    let start = match (range.months(), last) {
        (Some(m), Some(last)) => last.checked_sub_months(Months::new(m)),
        _ => None,
    };
    let mut points = Vec::new();
    let mut rows = Vec::new();
    for row in series.rows() {
        let Some(date) = parse_wire(&row.text("trade_date")) else {
            continue;
        };
        if start.is_some_and(|start| date <= start) {
            continue;
        }
        points.push((date, row.text("index_value")));
        let change = row.text("change");
        rows.push(DailyTableRow {
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
    (points, rows)
}

/// The specification quotes of the index's day `last` (an `aggregate` index's), and
/// that day's weighted price (the last of `series`).
async fn latest_quotes(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    window: &Window,
    series: &Table,
    last: NaiveDate,
) -> Result<(Vec<QuoteTableRow>, String), PageError> {
    let quotes = window
        .read("index_quote")
        .day("trade_date", Some(last))
        .whole();
    let detail = read(req, state, vec![quotes]).await?;
    let quotes = detail
        .table(0)?
        .rows()
        .map(|r| QuoteTableRow {
            specification: r.text("specification"),
            weight: r.text("weight"),
            price: r.text("price"),
        })
        .collect();
    let weighted_price = series
        .rows()
        .last()
        .and_then(|r| r.get("weighted_price"))
        .unwrap_or_default();
    Ok((quotes, weighted_price))
}

/// The latest revisions, each with a link to the index as it stood before.
fn revision_rows(table: &Table, code: &str, range: Range, tz: Tz) -> Vec<RevisionRow> {
    table
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
        .collect()
}

impl Facts {
    fn of(info: &Row<'_>, state: &AppState) -> Facts {
        let tz = state.site.service_tz;
        let day = |field: &str| {
            info.get(field)
                .and_then(|d| parse_wire(&d))
                .map(long_date)
                .unwrap_or_default()
        };
        let next = info.get("next_publication_at");
        Facts {
            currency: info.text("currency"),
            price_basis: info.text("price_basis"),
            source: info.text("source"),
            base: format!("{} = {}", day("base_date"), info.text("base_value")),
            publish_time: info.text("publish_time"),
            tz: tz.name(),
            methodology_version: info.text("methodology_version"),
            latest: day("latest_trade_date"),
            next: next
                .as_ref()
                .map(|at| local_time(at, tz))
                .unwrap_or_default(),
            overdue: next.is_some_and(|at| is_past(&at, state.site.clock.now())),
        }
    }
}
