//! `GET /api/v1/membership`: the current website identity's entitlements (D9). Never
//! counts against quotas.

use actix_web::{web, HttpRequest, HttpResponse};
use tracing::Span;

use super::AppState;
use crate::front::ShowMembership;
use crate::http::credentials;
use crate::http::envelope;
use crate::http::RequestId;

pub async fn membership(
    req: HttpRequest,
    request_id: RequestId,
    state: web::Data<AppState>,
) -> HttpResponse {
    // Membership describes the website identity: an API key header plays no part here.
    let message = ShowMembership {
        credentials: credentials::website(&req),
        span: Span::current(),
    };
    let result = state.front.send(message).await;
    envelope::respond(&request_id, result.map_err(Into::into).and_then(|r| r))
}
