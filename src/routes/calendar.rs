//! `PUT /api/v1/admin/calendar` (D7): set the open trading days, as a whole list or as
//! years rebuilt from a weekend rule and holidays. Administrators and super
//! administrators, with the CSRF token.
//!
//! Thin on purpose: the body's rules, the refusal to close days holding quotes and the
//! cache invalidation all live in [`iq_actors::calendar`], so this handler
//! must never touch the database or the caches itself.

use actix_web::web;
use iq_actors::calendar::CalendarChange;
use serde::Serialize;

use crate::http::{Admin, Answer, BackOffice, Body, HttpError};
use crate::state::AppState;

pub async fn replace(
    _: BackOffice<Admin>,
    body: Body<CalendarChange>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.calendar.replace(body.value()?).await?))
}
