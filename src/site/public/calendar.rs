//! `GET /calendar?year=YYYY`: a year of open and closed trading days, as the caller's
//! calendar query answers it. The grid itself is `site::calendar_grid`'s; this page
//! must never read the calendar any other way.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::Datelike;
use serde::Deserialize;

use super::{cached, caching, chrome};
use crate::site::calendar_grid::{self, Month};
use crate::site::chrome::Chrome;
use crate::site::respond::{render, PageResult};
use crate::state::AppState;

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
    cached(&req, &state, || render_calendar(&req, &query, &state)).await
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
