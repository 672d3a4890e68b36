//! `GET /compare?code=A&code=B&range=1Y&base=YYYY-MM-DD`: chosen indexes on one chart,
//! each rebased to 100 on the base day (the first day all of them have a value, unless
//! chosen), with the same numbers as a table. A plain GET form: the address is the
//! comparison, to share or bookmark, and it works without script and on a phone.
//!
//! Read like every page, as the caller's website identity: only indexes the caller may
//! see are offered or drawn, up to their delay cutoff.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{Months, NaiveDate};
use iq_actors::indexes::MAX_CODE_CHARS;
use iq_actors::wire_date::WireDate;
use rust_decimal::Decimal;

use super::{cached, chrome, freshness, Freshness};
use crate::site::chart::{self, Series, FULL};
use crate::site::chrome::Chrome;
use crate::site::format::{long_date, parse_wire, wire};
use crate::site::reading::{read, Read, Table};
use crate::site::respond::{render, PageError, PageResult};
use crate::state::AppState;

/// Lines one chart holds apart by colour.
const MOST: usize = 6;
/// The indexes compared when none is chosen: the first few in display order.
const FIRST: usize = 3;
const RANGES: [(&str, Option<u32>); 4] = [
    ("1M", Some(1)),
    ("3M", Some(3)),
    ("1Y", Some(12)),
    ("all", None),
];

/// An index the caller may compare, and whether it is chosen.
pub struct Choice {
    pub code: String,
    pub name: String,
    pub chosen: bool,
}

/// A chosen index as the legend shows it.
pub struct Legend {
    pub code: String,
    pub name: String,
    pub class: String,
    /// Its value on the base day, as published.
    pub base_value: String,
    /// Its last rebased value.
    pub last: String,
}

/// A day of the table: each chosen index's rebased value, or empty.
pub struct CompareRow {
    pub date_long: String,
    pub date_wire: String,
    pub values: Vec<String>,
}

#[derive(Template)]
#[template(path = "compare.html")]
struct ComparePage {
    chrome: Chrome,
    fresh: Freshness,
    choices: Vec<Choice>,
    range: &'static str,
    ranges: Vec<&'static str>,
    /// The base day as the form's date field holds it (`YYYY-MM-DD`), and readable.
    base_field: String,
    base_long: String,
    legend: Vec<Legend>,
    chart: String,
    rows: Vec<CompareRow>,
    note: Option<String>,
}

/// What the address asks for.
struct Ask {
    codes: Vec<String>,
    range: (&'static str, Option<u32>),
    base: Option<NaiveDate>,
}

impl Ask {
    fn parse(query: &str) -> Result<Ask, PageError> {
        let mut codes = Vec::new();
        let mut range = RANGES[2];
        let mut base = None;
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            match &*name {
                "code"
                    if !value.is_empty()
                        && value.len() <= MAX_CODE_CHARS
                        && !codes.iter().any(|c| *c == value) =>
                {
                    codes.push(value.into_owned());
                }
                "code" => {}
                "range" => {
                    range = *RANGES
                        .iter()
                        .find(|(label, _)| *label == value)
                        .ok_or_else(|| {
                            PageError::bad_request("The range must be one of 1M, 3M, 1Y or all.")
                        })?;
                }
                "base" if value.is_empty() => {}
                "base" => {
                    base = Some(WireDate::parse_dashed(&value).map(|d| d.0).map_err(|_| {
                        PageError::bad_request("The base day must be a date as YYYY-MM-DD.")
                    })?);
                }
                _ => {}
            }
        }
        Ok(Ask { codes, range, base })
    }
}

/// `GET /compare`.
pub async fn compare(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    cached(&req, &state, || render_compare(&req, &state)).await
}

async fn render_compare(req: &HttpRequest, state: &web::Data<AppState>) -> PageResult {
    let ask = Ask::parse(req.query_string())?;
    let listed = read(
        req,
        state,
        vec![Read::of("index_basic").fields(&["index_code", "index_name"])],
    )
    .await?;
    let visible: Vec<(String, String)> = listed
        .table(0)?
        .rows()
        .map(|r| (r.text("index_code"), r.text("index_name")))
        .collect();
    let (chosen, note) = choose(&ask.codes, &visible);
    let since = ask.range.1.map(|m| {
        let today = state.site.today();
        today.checked_sub_months(Months::new(m)).unwrap_or(today)
    });
    let queries = chosen
        .iter()
        .map(|code| {
            Read::of("index_daily")
                .param("index_code", code.as_str())
                .day("start_date", since)
                .fields(&["trade_date", "index_value"])
                .whole()
        })
        .collect();
    let reading = read(req, state, queries).await?;
    let series = (0..chosen.len())
        .map(|i| Ok(values(&reading.table(i)?)))
        .collect::<Result<Vec<_>, PageError>>()?;
    // The base day: the chosen one, else the first day every series has begun.
    let start = ask
        .base
        .or_else(|| series.iter().filter_map(|s| s.first().map(|p| p.0)).max());
    let (legend, rebased) = rebase(&series, start, &chosen, &visible);
    let named: Vec<Series<'_>> = rebased
        .iter()
        .zip(&chosen)
        .map(|(points, code)| Series { name: code, points })
        .collect();
    // A chosen day may fall where an index has no value: each then starts at its first
    // value from that day on, and the page says so.
    let base_long = match (ask.base, start) {
        (Some(_), Some(day)) => format!("its first value from {}", long_date(day)),
        (None, Some(day)) => long_date(day),
        _ => String::new(),
    };
    let label = format!("{} rebased to 100 on {base_long}", chosen.join(", "));
    let chart = chart::lines(&named, FULL, &label).unwrap_or_default();
    let page = ComparePage {
        chrome: chrome(req, state, &listed, "compare"),
        fresh: freshness(&listed),
        choices: visible
            .into_iter()
            .map(|(code, name)| Choice {
                chosen: chosen.contains(&code),
                code,
                name,
            })
            .collect(),
        range: ask.range.0,
        ranges: RANGES.iter().map(|r| r.0).collect(),
        base_field: ask.base.map(|d| d.to_string()).unwrap_or_default(),
        base_long,
        legend,
        chart,
        rows: table_rows(&rebased),
        note,
    };
    render(&page, StatusCode::OK, super::caching(&listed))
}

/// The indexes compared: those asked for that the caller may see (else the first
/// [`FIRST`] visible), at most [`MOST`]; and a note on any left out.
fn choose(asked: &[String], visible: &[(String, String)]) -> (Vec<String>, Option<String>) {
    let mut note = None;
    let mut chosen: Vec<String> = if asked.is_empty() {
        visible.iter().take(FIRST).map(|(c, _)| c.clone()).collect()
    } else {
        let (kept, dropped): (Vec<String>, Vec<String>) = asked
            .iter()
            .cloned()
            .partition(|c| visible.iter().any(|(v, _)| v == c));
        if !dropped.is_empty() {
            note = Some(format!(
                "Not compared, as no index by that name is visible to you: {}.",
                dropped.join(", ")
            ));
        }
        kept
    };
    if chosen.len() > MOST {
        note = Some(format!(
            "At most {MOST} indexes are compared at once: the first {MOST} are shown."
        ));
        chosen.truncate(MOST);
    }
    (chosen, note)
}

/// An index's values: each day with the value as a number and as published.
type Values = Vec<(NaiveDate, Decimal, String)>;

fn values(table: &Table) -> Values {
    table
        .rows()
        .filter_map(|r| {
            let date = parse_wire(&r.text("trade_date"))?;
            let text = r.text("index_value");
            Some((date, text.parse().ok()?, text))
        })
        .collect()
}

/// Each series from `start` on, rebased to 100 on its first value (two places), with
/// its legend; a series without a (non-zero) value from `start` on is an empty line
/// and no legend.
fn rebase(
    series: &[Values],
    start: Option<NaiveDate>,
    chosen: &[String],
    visible: &[(String, String)],
) -> (Vec<Legend>, Vec<Vec<(NaiveDate, String)>>) {
    let mut legend = Vec::new();
    let mut rebased = Vec::new();
    for (n, points) in series.iter().enumerate() {
        let points: Vec<&(NaiveDate, Decimal, String)> = points
            .iter()
            .filter(|p| start.is_none_or(|s| p.0 >= s))
            .collect();
        let Some(first) = points.first().filter(|p| !p.1.is_zero()) else {
            rebased.push(Vec::new());
            continue;
        };
        let line: Vec<(NaiveDate, String)> = points
            .iter()
            .map(|p| {
                (
                    p.0,
                    format!("{:.2}", (p.1 * Decimal::ONE_HUNDRED / first.1).round_dp(2)),
                )
            })
            .collect();
        let name = visible
            .iter()
            .find(|(c, _)| *c == chosen[n])
            .map(|(_, name)| name.clone())
            .unwrap_or_default();
        legend.push(Legend {
            code: chosen[n].clone(),
            name,
            class: format!("s{n}"),
            base_value: first.2.clone(),
            last: line.last().map(|p| p.1.clone()).unwrap_or_default(),
        });
        rebased.push(line);
    }
    (legend, rebased)
}

/// The table: every day any series has, newest first, each series' value or empty.
fn table_rows(rebased: &[Vec<(NaiveDate, String)>]) -> Vec<CompareRow> {
    let mut days: BTreeMap<NaiveDate, Vec<String>> = BTreeMap::new();
    for (n, points) in rebased.iter().enumerate() {
        for (date, value) in points {
            days.entry(*date)
                .or_insert_with(|| vec![String::new(); rebased.len()])[n] = value.clone();
        }
    }
    days.into_iter()
        .rev()
        .map(|(date, values)| CompareRow {
            date_long: long_date(date),
            date_wire: wire(date),
            values,
        })
        .collect()
}
