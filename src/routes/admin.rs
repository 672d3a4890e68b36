//! The administrators' endpoints (D7): users, tiers, any key's settings and usage,
//! index settings. Every one needs a session with the `super_admin` role, except key
//! usage, which any admin may read; changes also need the CSRF token.

use actix_web::{web, HttpRequest};
use iq_actors::accounts::{usage, IndexPatch, KeyPatch, NewUser, TierSettings, UserPatch};
use iq_actors::ApiError;
use serde::Serialize;

use super::AppState;
use crate::http::{Admin, Answer, BackOffice, Body, HttpError, SuperAdmin};

type Reply<T> = Result<Answer<T>, HttpError>;

pub async fn create_user(
    _: BackOffice<SuperAdmin>,
    body: Body<NewUser>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.create_user(body.value()?).await?))
}

pub async fn patch_user(
    _: BackOffice<SuperAdmin>,
    id: web::Path<String>,
    body: Body<UserPatch>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.patch_user(&id, body.value()?).await?))
}

pub async fn tiers(_: BackOffice<SuperAdmin>, state: web::Data<AppState>) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.tiers().await?))
}

pub async fn replace_tier(
    _: BackOffice<SuperAdmin>,
    tier: web::Path<String>,
    body: Body<TierSettings>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state.accounts.replace_tier(&tier, body.value()?).await?,
    ))
}

pub async fn patch_key(
    _: BackOffice<SuperAdmin>,
    id: web::Path<String>,
    body: Body<KeyPatch>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.patch_key(&id, body.value()?).await?))
}

pub async fn patch_index(
    _: BackOffice<SuperAdmin>,
    index_code: web::Path<String>,
    body: Body<IndexPatch>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state
            .accounts
            .patch_index(&index_code, body.value()?)
            .await?,
    ))
}

/// `GET /api/v1/admin/keys/{id}/usage?days=N`: any key's calls per UTC day (admins).
pub async fn key_usage(
    _: BackOffice<Admin>,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let days = usage_days(req.query_string())?;
    Ok(Answer(state.accounts.key_usage(&id, days).await?))
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
