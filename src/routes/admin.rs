//! The super administrator's endpoints (D7): users, tiers, any key's settings, index
//! settings. Every one needs a session with the `super_admin` role; changes also need
//! the CSRF token.

use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::accounts::{IndexPatch, KeyPatch, NewUser, TierSettings, UserPatch};
use iq_actors::caller::Role;

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
