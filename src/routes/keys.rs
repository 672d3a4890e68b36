//! `GET/POST /api/v1/keys`, `PATCH/DELETE /api/v1/keys/{id}`, `POST
//! /api/v1/keys/{id}/rotate`, `GET /api/v1/keys/{id}/usage`: a signed-in user's own API
//! keys (D7). Someone else's key is 404, never 403, so ids cannot be probed. A full key
//! appears once, in the answer that made it (creation, rotation), which no cache may keep.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, Responder};
use iq_actors::accounts::{KeyRename, NewKey};
use serde::Serialize;

use super::params::Params;
use crate::http::{Answer, AnyUser, BackOffice, Body, HttpError};
use crate::state::AppState;

pub async fn list(
    guard: BackOffice<AnyUser>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(
        state.accounts.list_keys(&guard.session.account).await?,
    ))
}

pub async fn create(
    guard: BackOffice<AnyUser>,
    body: Body<NewKey>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let created = state
        .accounts
        .create_key(&guard.session.account, body.value()?)
        .await?;
    // The new key is in the body, once.
    Ok(Answer(created)
        .customize()
        .insert_header(CacheControl(vec![CacheDirective::NoStore])))
}

#[derive(Serialize)]
struct Deleted {
    deleted: String,
}

pub async fn delete(
    guard: BackOffice<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    state
        .accounts
        .delete_key(&guard.session.account, &id)
        .await?;
    Ok(Answer(Deleted {
        deleted: id.into_inner(),
    }))
}

/// A new secret for the key; the old one is refused at once.
pub async fn rotate(
    guard: BackOffice<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let rotated = state
        .accounts
        .rotate_key(&guard.session.account, &id)
        .await?;
    // The new key is in the body, once.
    Ok(Answer(rotated)
        .customize()
        .insert_header(CacheControl(vec![CacheDirective::NoStore])))
}

pub async fn rename(
    guard: BackOffice<AnyUser>,
    id: web::Path<String>,
    body: Body<KeyRename>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let renamed = state
        .accounts
        .rename_key(&guard.session.account, &id, body.value()?)
        .await?;
    Ok(Answer(renamed))
}

/// `GET /api/v1/keys/{id}/usage?days=N`: the key's calls per UTC day, newest first.
pub async fn usage(
    guard: BackOffice<AnyUser>,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let days = Params::parse(req.query_string(), &["days"])?.days()?;
    let usage = state
        .accounts
        .own_key_usage(&guard.session.account, &id, days)
        .await?;
    Ok(Answer(usage))
}
