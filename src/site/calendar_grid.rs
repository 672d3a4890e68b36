//! A year of trading days as month grids (weeks of seven cells, Monday first), for the
//! public calendar and the back office's.

use std::collections::BTreeSet;

use actix_web::{web, HttpRequest};
use chrono::{Datelike, NaiveDate, Weekday};

use super::format::{parse_wire, wire};
use super::reading::{read, Read, Reading};
use super::respond::PageError;
use crate::state::AppState;

/// The years a calendar page shows.
pub fn checked_year(year: i32) -> Result<i32, PageError> {
    if (1900..=2200).contains(&year) {
        Ok(year)
    } else {
        Err(PageError::bad_request(
            "The year must be between 1900 and 2200.",
        ))
    }
}

/// The open days of `year`, read as the request's website identity (the calendar is
/// not delayed: every caller sees it whole, as through the API).
pub async fn open_days(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    year: i32,
) -> Result<(Reading, BTreeSet<NaiveDate>), PageError> {
    let reading = read(
        req,
        state,
        vec![Read::of("trade_calendar")
            .param("start_date", format!("{year}0101"))
            .param("end_date", format!("{year}1231"))
            .fields(&["trade_date"])
            .whole()],
    )
    .await?;
    let open = reading
        .table(0)?
        .rows()
        .filter_map(|r| parse_wire(&r.text("trade_date")))
        .collect();
    Ok((reading, open))
}

pub struct Month {
    pub name: String,
    /// Weeks of seven cells, Monday first; `None` outside the month.
    pub weeks: Vec<Vec<Option<Day>>>,
    pub open_days: usize,
}

pub struct Day {
    pub day: u32,
    pub open: bool,
    pub wire: String,
    /// Saturday or Sunday.
    pub weekend: bool,
}

/// The twelve months of `year`, each day marked open when `open` holds it.
pub fn year(year: i32, open: &BTreeSet<NaiveDate>) -> Vec<Month> {
    (1..=12).filter_map(|m| month(year, m, open)).collect()
}

fn month(year: i32, month: u32, open: &BTreeSet<NaiveDate>) -> Option<Month> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let mut weeks = Vec::new();
    let mut week: Vec<Option<Day>> = (0..first.weekday().num_days_from_monday())
        .map(|_| None)
        .collect();
    let mut open_days = 0;
    for date in first.iter_days().take_while(|d| d.month() == month) {
        let is_open = open.contains(&date);
        open_days += usize::from(is_open);
        week.push(Some(Day {
            day: date.day(),
            open: is_open,
            wire: wire(date),
            weekend: matches!(date.weekday(), Weekday::Sat | Weekday::Sun),
        }));
        if date.weekday() == Weekday::Sun {
            weeks.push(std::mem::take(&mut week));
        }
    }
    if !week.is_empty() {
        week.resize_with(7, || None);
        weeks.push(week);
    }
    Some(Month {
        name: first.format("%B").to_string(),
        weeks,
        open_days,
    })
}
