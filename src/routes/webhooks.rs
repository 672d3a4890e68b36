//! `GET/POST /api/v1/webhooks`, `DELETE /api/v1/webhooks/{id}`, `POST
//! /api/v1/webhooks/{id}/test`, `GET /api/v1/webhooks/{id}/deliveries`, `POST
//! /api/v1/webhooks/{id}/deliveries/{delivery_id}/replay`, `POST
//! /api/v1/webhooks/{id}/rotate-secret` and `POST /api/v1/webhooks/{id}/recover`: a
//! signed-in member's webhook endpoints (D22, D27), with the session and, for changes,
//! its CSRF token, as `/keys`.
//! Someone else's endpoint is 404. The secret appears once, in the answer that made it.
//! `GET /api/v1/admin/webhooks`: every account's, for administrators.

use actix_web::http::StatusCode;
use actix_web::{delete, get, post, web, Responder};
use iq_actors::webhooks::{
    AttemptView, CreatedWebhook, NewWebhook, OwnedWebhookView, Queued, Recover, Recovered,
    RotatedSecret, WebhookView,
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::http::{Admin, Answer, AnyUser, Body, HttpError, SessionGuard};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// List my webhooks
///
/// The caller's endpoints (never their secrets), each with whether it is failing or
/// disabled.
#[utoipa::path(
    tag = "events",
    operation_id = "list_webhooks",
    responses(
        (status = 200, description = "The endpoints.", body = Vec<WebhookView>),
        CallerRefusals,
    ),
    security(("session" = [])),
)]
#[get("/webhooks")]
pub async fn list(
    guard: SessionGuard<AnyUser>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.webhooks.list(&guard.session.account).await?))
}

/// Add a webhook
///
/// An endpoint that receives the account's events (those named in `events`) signed as
/// Standard Webhooks specify. The URL must be `https` on a public host. The signing
/// secret is in this answer and nowhere else: store it. A tier's `max_webhooks`
/// reached is 409 / 40901.
#[utoipa::path(
    tag = "events",
    operation_id = "create_webhook",
    request_body(content = NewWebhook, content_type = "application/json"),
    responses(
        (
            status = 201,
            description = "The endpoint and, once, its secret.",
            body = CreatedWebhook,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the secret")),
        ),
        CallerRefusals,
        (status = 409, response = Conflict),
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/webhooks")]
pub async fn create(
    guard: SessionGuard<AnyUser>,
    body: Body<NewWebhook>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let created = state
        .webhooks
        .create(&guard.author(), body.value()?)
        .await?;
    Ok(Answer(created).unstored().with_status(StatusCode::CREATED))
}

#[derive(Serialize, ToSchema)]
struct Deleted {
    /// the deleted endpoint's id
    deleted: String,
}

/// Delete a webhook
///
/// The endpoint and its delivery log are gone; nothing more is sent to it. No body.
#[utoipa::path(
    tag = "events",
    operation_id = "delete_webhook",
    params(("id" = String, Path, description = "the endpoint's id")),
    responses(
        (status = 200, description = "The endpoint is deleted.", body = Deleted),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[delete("/webhooks/{id}")]
pub async fn delete(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let deleted = state.webhooks.delete(&guard.author(), &id).await?;
    Ok(Answer(Deleted {
        deleted: deleted.to_string(),
    }))
}

/// Test a webhook
///
/// Sends the endpoint a `webhook.test` message (signed like every other) within a
/// second or so; its attempt appears in the delivery log. A test is attempted once,
/// never retried. At most 5 a minute for an account (429 / 42901 with `Retry-After`).
/// No body.
#[utoipa::path(
    tag = "events",
    operation_id = "test_webhook",
    params(("id" = String, Path, description = "the endpoint's id")),
    responses(
        (status = 200, description = "The message is queued.", body = Queued),
        ResourceRefusals,
        (status = 429, response = TooManyRequests),
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/webhooks/{id}/test")]
pub async fn test(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(
        state.webhooks.test(&guard.session.account, &id).await?,
    ))
}

/// A webhook's delivery log
///
/// The endpoint's last 100 attempts, newest first: when, the answer's status (null
/// when none came), the latency and, for a failure without an answer, why.
#[utoipa::path(
    tag = "events",
    operation_id = "webhook_deliveries",
    params(("id" = String, Path, description = "the endpoint's id")),
    responses(
        (status = 200, description = "The attempts.", body = Vec<AttemptView>),
        ResourceRefusals,
    ),
    security(("session" = [])),
)]
#[get("/webhooks/{id}/deliveries")]
pub async fn deliveries(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(
        state.webhooks.log(&guard.session.account, &id).await?,
    ))
}

/// Replay a delivery
///
/// Sends one message again, now, with the same `webhook-id` (a receiver that
/// deduplicates by it sees it once): a delivered or failed one once more, one waiting
/// for a retry at once. One being sent at this moment is 404. No body.
#[utoipa::path(
    tag = "events",
    operation_id = "replay_webhook_delivery",
    params(
        ("id" = String, Path, description = "the endpoint's id"),
        ("delivery_id" = String, Path, description = "the delivery's id"),
    ),
    responses(
        (status = 200, description = "The message is queued again.", body = Queued),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/webhooks/{id}/deliveries/{delivery_id}/replay")]
pub async fn replay(
    guard: SessionGuard<AnyUser>,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let (id, delivery) = path.into_inner();
    Ok(Answer(
        state
            .webhooks
            .replay(&guard.session.account, &id, &delivery)
            .await?,
    ))
}

/// Rotate a webhook's secret
///
/// A new signing secret, in this answer and nowhere else. For 24 hours every message
/// carries two signatures in `webhook-signature`, the new secret's first, then the
/// old one's (`v1,<new> v1,<old>`), so the receiver can switch at its own pace; then
/// only the new one's. No body.
#[utoipa::path(
    tag = "events",
    operation_id = "rotate_webhook_secret",
    params(("id" = String, Path, description = "the endpoint's id")),
    responses(
        (
            status = 200,
            description = "The new secret, once.",
            body = RotatedSecret,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the secret")),
        ),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/webhooks/{id}/rotate-secret")]
pub async fn rotate_secret(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let rotated = state.webhooks.rotate_secret(&guard.author(), &id).await?;
    Ok(Answer(rotated).unstored())
}

/// Recover failed deliveries
///
/// After an outage on the receiver's side: every delivery of an event since `since`
/// (at most 7 days back) that failed, and, when the endpoint was disabled, those it
/// left waiting, are sent again now with the same `webhook-id`, each with a fresh
/// retry schedule; a disabled endpoint is enabled. Delivered ones and test messages
/// are not sent again.
#[utoipa::path(
    tag = "events",
    operation_id = "recover_webhook",
    params(("id" = String, Path, description = "the endpoint's id")),
    request_body(content = Recover, content_type = "application/json"),
    responses(
        (status = 200, description = "How many deliveries are queued again.", body = Recovered),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/webhooks/{id}/recover")]
pub async fn recover(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    body: Body<Recover>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(
        state
            .webhooks
            .recover(&guard.author(), &id, body.value()?)
            .await?,
    ))
}

/// Every account's webhooks
///
/// Every endpoint with its owner, its deliveries waiting and given up, and its latest
/// attempt: those disabled first, then those failing longest (at most 500).
#[utoipa::path(
    tag = "admin",
    operation_id = "admin_webhooks",
    responses(
        (status = 200, description = "The endpoints.", body = Vec<OwnedWebhookView>),
        CallerRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("admin"))),
)]
#[get("/admin/webhooks")]
pub async fn admin_list(
    _: SessionGuard<Admin>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.webhooks.all().await?))
}
