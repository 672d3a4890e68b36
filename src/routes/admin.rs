//! The administrators' endpoints (D7): users, tiers, any key's settings and usage,
//! index settings. Every one needs a session with the `super_admin` role, except key
//! usage, which any admin may read; changes also need the CSRF token.

use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::accounts::{usage, IndexPatch, KeyPatch, NewUser, TierSettings, UserPatch};
use iq_actors::caller::Role;
use iq_actors::ApiError;

use super::AppState;
use crate::http::session::{answer, Access};
use crate::http::RequestId;

const READ: Access = Access::Read(Role::SuperAdmin);
const WRITE: Access = Access::Write(Role::SuperAdmin);

pub async fn create_user(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        WRITE,
        Some(payload),
        async |_, new: NewUser| state.accounts.create_user(new).await,
    )
    .await
}

pub async fn patch_user(
    req: HttpRequest,
    request_id: RequestId,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        WRITE,
        Some(payload),
        async |_, patch: UserPatch| state.accounts.patch_user(&id, patch).await,
    )
    .await
}

pub async fn tiers(
    req: HttpRequest,
    request_id: RequestId,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(&req, &request_id, &state, READ, None, async |_, ()| {
        state.accounts.tiers().await
    })
    .await
}

pub async fn replace_tier(
    req: HttpRequest,
    request_id: RequestId,
    tier: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        WRITE,
        Some(payload),
        async |_, settings: TierSettings| state.accounts.replace_tier(&tier, settings).await,
    )
    .await
}

pub async fn patch_key(
    req: HttpRequest,
    request_id: RequestId,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        WRITE,
        Some(payload),
        async |_, patch: KeyPatch| state.accounts.patch_key(&id, patch).await,
    )
    .await
}

pub async fn patch_index(
    req: HttpRequest,
    request_id: RequestId,
    index_code: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        WRITE,
        Some(payload),
        async |_, patch: IndexPatch| state.accounts.patch_index(&index_code, patch).await,
    )
    .await
}

/// `GET /api/v1/admin/keys/{id}/usage?days=N`: any key's calls per UTC day (admins).
pub async fn key_usage(
    req: HttpRequest,
    request_id: RequestId,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let days = usage_days(req.query_string());
    answer(
        &req,
        &request_id,
        &state,
        Access::Read(Role::Admin),
        None,
        async |_, ()| state.accounts.key_usage(&id, days?).await,
    )
    .await
}

/// `days`: 1..=366, default 30; any other parameter is refused.
fn usage_days(query: &str) -> Result<u32, ApiError> {
    let mut days = 30;
    let pairs = web::Query::<Vec<(String, String)>>::from_query(query)
        .map_err(|_| ApiError::invalid("the query string is not valid"))?;
    for (name, value) in pairs.into_inner() {
        if name != "days" {
            return Err(ApiError::invalid(format!(
                "unknown query parameter '{name}'; expected days"
            )));
        }
        days = value
            .parse()
            .ok()
            .filter(|d| (1..=usage::MAX_DAYS).contains(d))
            .ok_or_else(|| {
                ApiError::invalid(format!(
                    "days must be a whole number from 1 to {}",
                    usage::MAX_DAYS
                ))
            })?;
    }
    Ok(days)
}
