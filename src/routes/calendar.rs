//! `PUT /api/v1/admin/calendar` (D7): set the open trading days, as a whole list or as
//! years rebuilt from a weekend rule and holidays. Administrators and super
//! administrators, with the CSRF token.
//!
//! Thin on purpose: the body's rules, the refusal to close days holding quotes and the
//! cache invalidation all live in [`iq_actors::calendar`], so this handler
//! must never touch the database or the caches itself.

use actix_web::{put, web};
use iq_actors::calendar;
use serde::Serialize;

use crate::http::{Admin, Answer, Body, HttpError, SessionGuard};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Set the trading calendar
///
/// Either the whole calendar as a list of open days, or years rebuilt from a weekend
/// rule and holidays (days outside them are kept). A change that would close a day
/// holding quotes or index rows is 409 / 40901 naming the days.
#[utoipa::path(
    tag = "admin",
    operation_id = "replace_calendar",
    request_body(content = CalendarChange, content_type = "application/json"),
    responses(
        (status = 200, description = "The whole calendar after the change.", body = CalendarSummary),
        CallerRefusals,
        (status = 409, response = Conflict),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("admin"))),
)]
#[put("/admin/calendar")]
pub async fn replace(
    guard: SessionGuard<Admin>,
    body: Body<calendar::CalendarChange>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(
        state
            .calendar
            .replace(&guard.author(), body.value()?)
            .await?,
    ))
}
