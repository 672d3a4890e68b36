//! The administrators' endpoints (D7): users, tiers, every key with its settings and
//! usage, index settings. Every one needs a session with the `super_admin` role, except
//! key usage, which any admin may read; changes also need the CSRF token.

use actix_web::{web, HttpRequest};
use iq_actors::accounts::{IndexPatch, KeyPatch, NewUser, TierSettings, UserPatch};
use serde::Serialize;

use super::params::Params;
use crate::http::{Admin, Answer, BackOffice, Body, HttpError, SuperAdmin};
use crate::state::AppState;

type Reply<T> = Result<Answer<T>, HttpError>;

pub async fn create_user(
    _: BackOffice<SuperAdmin>,
    body: Body<NewUser>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.create_user(body.value()?).await?))
}

/// `GET /api/v1/admin/users?limit=&offset=&q=`: users by user name, `q` a part of it.
pub async fn list_users(
    _: BackOffice<SuperAdmin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let params = Params::parse(req.query_string(), &["limit", "offset", "q"])?;
    let (page, q) = (params.standard_page()?, params.search("q")?);
    Ok(Answer(state.accounts.list_users(page, &q).await?))
}

/// `GET /api/v1/admin/users/{id}`: one user, their keys and 30 days of usage.
pub async fn user_detail(
    _: BackOffice<SuperAdmin>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.user_detail(&id).await?))
}

/// `GET /api/v1/admin/keys?limit=&offset=&user_id=&q=`: every live key with its owner.
pub async fn list_keys(
    _: BackOffice<SuperAdmin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let params = Params::parse(req.query_string(), &["limit", "offset", "user_id", "q"])?;
    let (page, q) = (params.standard_page()?, params.search("q")?);
    let keys = state
        .accounts
        .list_all_keys(page, params.id("user_id")?, &q)
        .await?;
    Ok(Answer(keys))
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
    Ok(Answer(state.tiers.list().await?))
}

pub async fn replace_tier(
    _: BackOffice<SuperAdmin>,
    tier: web::Path<String>,
    body: Body<TierSettings>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.tiers.replace(&tier, body.value()?).await?))
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
            .index_settings
            .patch(&index_code, body.value()?)
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
    let days = Params::parse(req.query_string(), &["days"])?.days()?;
    Ok(Answer(state.accounts.key_usage(&id, days).await?))
}
