//! `GET /api/v1/membership`: what the caller is entitled to (D9). With a key (in
//! `X-API-Key` or `Authorization: Bearer`) it describes the key: its owner, range,
//! scopes, expiry and today's use against its effective limits (D14); without one, the
//! website identity (session or visitor) and the keyless protection that applies to
//! it. Never counts against a quota.

use actix_web::{get, web, HttpRequest};
use iq_actors::caller;
use serde::Serialize;
use tracing::Span;

use crate::front_actor::{KeylessProtection, Membership, ShowMembership};
use crate::http::credentials;
use crate::http::{Answer, HttpError};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// The caller's entitlements
///
/// Without a key: the website identity (the session of the cookie, or the visitor when
/// there is none or it is unknown, logged out or expired): its tier, delay, data cutoff,
/// visible indexes, the tier's key quota and the per-minute protection of callers
/// without a key. With a key (`X-API-Key` or `Authorization: Bearer`): the key, its
/// owner, range, scopes and expiry, and today's use against its effective limits; asking
/// spends nothing, and a refused key gets the answer a query would (401, 403). Never
/// counted.
#[utoipa::path(
    tag = "site",
    operation_id = "membership",
    responses(
        (status = 200, description = "The caller's entitlements.", body = Membership),
        CallerRefusals,
    ),
    security((), ("api_key" = []), ("bearer" = []), ("session" = [])),
)]
#[get("/membership")]
pub async fn membership(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let credentials = credentials::presented(&req)?;
    let keyless = !matches!(credentials, caller::Credentials::ApiKey(_));
    let message = ShowMembership {
        credentials,
        client_ip: state.client_ip(&req),
        span: Span::current(),
    };
    let mut membership = state.front.send(message).await??;
    if keyless {
        membership.protection = Some(KeylessProtection {
            per_minute: state.protection.website.limit(),
        });
    }
    Ok(Answer(membership))
}
