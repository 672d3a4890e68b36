//! `GET/POST /api/v1/keys`, `PATCH/DELETE /api/v1/keys/{id}`, `POST
//! /api/v1/keys/{id}/rotate`, `GET /api/v1/keys/{id}/usage`: a signed-in user's own API
//! keys (D7). Someone else's key is 404, never 403, so ids cannot be probed. A full key
//! appears once, in the answer that made it (creation, rotation), which no cache may keep.

use actix_web::{delete, get, patch, post, web, HttpRequest, Responder};
use iq_actors::accounts;
use serde::Serialize;
use utoipa::ToSchema;

use super::params::DaysQuery;
use crate::http::{Answer, AnyUser, Body, HttpError, SessionGuard};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// List my keys
///
/// The caller's keys that are not deleted (never the key itself), each with today's
/// counted calls.
#[utoipa::path(
    tag = "keys",
    operation_id = "list_own_keys",
    responses(
        (status = 200, description = "The keys.", body = Vec<KeyView>),
        CallerRefusals,
    ),
    security(("session" = [])),
)]
#[get("/keys")]
pub async fn list(
    guard: SessionGuard<AnyUser>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(
        state.accounts.list_keys(&guard.session.account).await?,
    ))
}

/// Create a key
///
/// A new key with every scope. The full key is in this answer and nowhere else: store
/// it. IP allow-lists are for professional members (403 / 40301 on the free tier); a
/// tier's `max_keys` reached is 409 / 40901; API access switched off is 403 / 40301.
#[utoipa::path(
    tag = "keys",
    operation_id = "create_key",
    request_body(content = NewKey, content_type = "application/json"),
    responses(
        (
            status = 200,
            description = "The key's metadata and, once, the key.",
            body = CreatedKey,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the key")),
        ),
        CallerRefusals,
        (status = 409, response = Conflict),
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/keys")]
pub async fn create(
    guard: SessionGuard<AnyUser>,
    body: Body<accounts::NewKey>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let created = state
        .accounts
        .create_key(&guard.author(), body.value()?)
        .await?;
    // The new key is in the body, once.
    Ok(Answer(created).unstored())
}

#[derive(Serialize, ToSchema)]
struct Deleted {
    /// the deleted key's id
    deleted: String,
}

/// Delete a key
///
/// The key is refused at once (401 / 40102); its calls of the day still count against the
/// account. No body.
#[utoipa::path(
    tag = "keys",
    operation_id = "delete_key",
    params(("id" = String, Path, description = "the key's id")),
    responses(
        (status = 200, description = "The key is deleted.", body = Deleted),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[delete("/keys/{id}")]
pub async fn delete(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    state.accounts.delete_key(&guard.author(), &id).await?;
    Ok(Answer(Deleted {
        deleted: id.into_inner(),
    }))
}

/// Give a key a new secret
///
/// The key keeps its id, settings, state, usage and quota; only the secret and
/// `key_hint` change. The old secret is refused from this answer on (within a second on
/// other instances). The new key is in this answer and nowhere else. No body.
#[utoipa::path(
    tag = "keys",
    operation_id = "rotate_key",
    params(("id" = String, Path, description = "the key's id")),
    responses(
        (
            status = 200,
            description = "The key's metadata and, once, its new key.",
            body = CreatedKey,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the key")),
        ),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/keys/{id}/rotate")]
pub async fn rotate(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let rotated = state.accounts.rotate_key(&guard.author(), &id).await?;
    // The new key is in the body, once.
    Ok(Answer(rotated).unstored())
}

/// Rename a key
///
/// Only `name` is accepted: spaces around it are dropped, then it must be 1 to 100
/// characters without control characters.
#[utoipa::path(
    tag = "keys",
    operation_id = "rename_key",
    params(("id" = String, Path, description = "the key's id")),
    request_body(content = KeyRename, content_type = "application/json"),
    responses(
        (status = 200, description = "The key's metadata.", body = KeyView),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[patch("/keys/{id}")]
pub async fn rename(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    body: Body<accounts::KeyRename>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let renamed = state
        .accounts
        .rename_key(&guard.author(), &id, body.value()?)
        .await?;
    Ok(Answer(renamed))
}

/// Usage of my key
///
/// The key's counted calls per UTC day, newest first (days without calls as 0), its
/// limits in force, and its owner's account over the same days. Written by the instances
/// every `QUOTA_FLUSH_MS`, so it may lag the calls by that much.
#[utoipa::path(
    tag = "keys",
    operation_id = "own_key_usage",
    params(("id" = String, Path, description = "the key's id"), DaysQuery),
    responses(
        (status = 200, description = "The key's usage.", body = KeyUsage),
        ResourceRefusals,
    ),
    security(("session" = [])),
)]
#[get("/keys/{id}/usage")]
pub async fn usage(
    guard: SessionGuard<AnyUser>,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let days = DaysQuery::read(req.query_string())?;
    let usage = state
        .accounts
        .own_key_usage(&guard.session.account, &id, days)
        .await?;
    Ok(Answer(usage))
}
