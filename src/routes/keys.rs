//! `GET/POST /api/v1/keys`, `DELETE /api/v1/keys/{id}`: a signed-in user's own API keys
//! (D7). The full key appears once, in the creation response, which no cache may keep.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, Responder};
use iq_actors::accounts::NewKey;
use serde::Serialize;

use super::AppState;
use crate::http::{Answer, AnyUser, BackOffice, Body, HttpError};

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
