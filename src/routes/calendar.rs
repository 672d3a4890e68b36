//! `PUT /api/v1/admin/calendar` (D7): set the open trading days, as a whole list or as
//! years rebuilt from a weekend rule and holidays. Administrators and super
//! administrators, with the CSRF token.
//!
//! Thin on purpose: the body's rules, the refusal to close days holding quotes and the
//! cache invalidation all live in [`iq_actors::quotes::calendar_admin`], so this handler
//! must never touch the database or the caches itself.

use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::caller::Role;
use iq_actors::quotes::calendar_admin::CalendarChange;

use super::AppState;
use crate::http::session::{answer, Access};
use crate::http::RequestId;

pub async fn replace(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        Access::Write(Role::Admin),
        Some(payload),
        async |_, change: CalendarChange| state.accounts.replace_calendar(change).await,
    )
    .await
}
