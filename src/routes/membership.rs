//! `GET /api/v1/membership`: what the caller is entitled to (D9). With a key (in
//! `X-API-Key` or `Authorization: Bearer`) it describes the key: its owner, range,
//! scopes, expiry and today's use against its effective limits (D14); without one, the
//! website identity (session or visitor) and the keyless protection that applies to
//! it. Never counts against a quota.

use actix_web::{web, HttpRequest};
use iq_actors::caller::Credentials;
use serde::Serialize;
use tracing::Span;

use crate::front::{KeylessProtection, ShowMembership};
use crate::http::credentials;
use crate::http::{Answer, HttpError};
use crate::state::AppState;

pub async fn membership(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let credentials = credentials::presented(&req)?;
    let keyless = !matches!(credentials, Credentials::ApiKey(_));
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
