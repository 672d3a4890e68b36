//! `GET /api/v1/membership`: the current website identity's entitlements (D9). Never
//! counts against quotas.

use actix_web::{web, HttpRequest};
use serde::Serialize;
use tracing::Span;

use super::AppState;
use crate::front::ShowMembership;
use crate::http::credentials;
use crate::http::{Answer, HttpError};

pub async fn membership(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    // Membership describes the website identity: an API key header plays no part here.
    let message = ShowMembership {
        credentials: credentials::website(&req),
        span: Span::current(),
    };
    Ok(Answer(state.front.send(message).await??))
}
