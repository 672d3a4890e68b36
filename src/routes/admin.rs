//! The super administrator's endpoints (D7): users, tiers, any key's settings, index
//! settings. Every one needs a session with the `super_admin` role; changes also need
//! the CSRF token.

use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::accounts::{IndexPatch, KeyPatch, NewUser, TierSettings, UserPatch};
use iq_actors::caller::Role;

use super::AppState;
use crate::http::session::{self, Access};
use crate::http::{envelope, json_body, RequestId};

const READ: Access = Access::Read(Role::SuperAdmin);
const WRITE: Access = Access::Write(Role::SuperAdmin);

pub async fn create_user(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, WRITE).await?;
        let new: NewUser = json_body::parse(&req, payload).await?;
        state.accounts.create_user(new).await
    }
    .await;
    envelope::respond(&request_id, result)
}

pub async fn patch_user(
    req: HttpRequest,
    request_id: RequestId,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, WRITE).await?;
        let patch: UserPatch = json_body::parse(&req, payload).await?;
        state.accounts.patch_user(&id, patch).await
    }
    .await;
    envelope::respond(&request_id, result)
}

pub async fn tiers(
    req: HttpRequest,
    request_id: RequestId,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, READ).await?;
        state.accounts.tiers().await
    }
    .await;
    envelope::respond(&request_id, result)
}

pub async fn replace_tier(
    req: HttpRequest,
    request_id: RequestId,
    tier: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, WRITE).await?;
        let settings: TierSettings = json_body::parse(&req, payload).await?;
        state.accounts.replace_tier(&tier, settings).await
    }
    .await;
    envelope::respond(&request_id, result)
}

pub async fn patch_key(
    req: HttpRequest,
    request_id: RequestId,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, WRITE).await?;
        let patch: KeyPatch = json_body::parse(&req, payload).await?;
        state.accounts.patch_key(&id, patch).await
    }
    .await;
    envelope::respond(&request_id, result)
}

pub async fn patch_index(
    req: HttpRequest,
    request_id: RequestId,
    index_code: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, WRITE).await?;
        let patch: IndexPatch = json_body::parse(&req, payload).await?;
        state.accounts.patch_index(&index_code, patch).await
    }
    .await;
    envelope::respond(&request_id, result)
}
