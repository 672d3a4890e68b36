//! The trading calendar (administrators): a year of open and closed days; tick the
//! weekdays that are holidays and save, which rebuilds the year as weekdays minus
//! holidays (the year form of `PUT /api/v1/admin/calendar`, with its refusal to close
//! a day that holds quotes).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::Datelike;
use iq_actors::calendar::CalendarChange;
use serde::Deserialize;

use super::{Admin, Staff};
use crate::site::calendar_grid::{self, Month};
use crate::site::chrome::Chrome;
use crate::site::form::Sent;
use crate::site::respond::{
    is_refusal, render, see_other, status_with, Caching, PageError, PageResult,
};
use crate::state::AppState;

#[derive(Deserialize)]
pub struct YearQuery {
    year: Option<i32>,
}

#[derive(Template)]
#[template(path = "admin/calendar.html")]
struct CalendarPage {
    chrome: Chrome,
    year: i32,
    months: Vec<Month>,
    open_days: usize,
    problem: Option<String>,
    saved: bool,
    /// The year has no open day yet: its weekdays are offered open.
    fresh: bool,
}

async fn page(
    req: &HttpRequest,
    staff: &Staff<Admin>,
    state: &web::Data<AppState>,
    year: i32,
    problem: Option<String>,
) -> PageResult {
    let (_, open) = calendar_grid::open_days(req, state, year).await?;
    let status = status_with(&problem, StatusCode::CONFLICT);
    let page = CalendarPage {
        chrome: staff.chrome(req, state),
        year,
        open_days: open.len(),
        fresh: open.is_empty(),
        months: calendar_grid::year(year, &open),
        problem,
        saved: req.query_string().contains("saved=1"),
    };
    render(&page, status, Caching::Private)
}

/// `GET /admin/calendar?year=YYYY`.
pub async fn show(
    req: HttpRequest,
    staff: Staff<Admin>,
    query: web::Query<YearQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let year =
        calendar_grid::checked_year(query.year.unwrap_or_else(|| state.site.today().year()))?;
    page(&req, &staff, &state, year, None).await
}

/// `POST /admin/calendar`: the year rebuilt as its weekdays minus the ticked holidays.
pub async fn save(
    req: HttpRequest,
    Sent(staff, form): Sent<Staff<Admin>>,
    state: web::Data<AppState>,
) -> PageResult {
    let year = form
        .one("year")
        .and_then(|y| y.parse().ok())
        .ok_or_else(|| PageError::bad_request("The form has no year."))?;
    let year = calendar_grid::checked_year(year)?;
    let change = CalendarChange {
        from_year: Some(year.into()),
        to_year: Some(year.into()),
        holidays: Some(form.all("holiday")),
        ..CalendarChange::default()
    };
    match state.calendar.replace(&staff.author(), change).await {
        Ok(_) => Ok(see_other(&format!("/admin/calendar?year={year}&saved=1")).finish()),
        Err(error) if is_refusal(&error) => {
            page(&req, &staff, &state, year, Some(error.message)).await
        }
        Err(error) => Err(error.into()),
    }
}
