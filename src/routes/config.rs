//! `GET /api/v1/config`: site configuration before login (D9). Never counts against quotas.

use actix_web::{web, HttpResponse};
use tracing::Span;

use super::AppState;
use crate::front::ShowConfig;
use crate::http::envelope;
use crate::http::RequestId;

pub async fn config(request_id: RequestId, state: web::Data<AppState>) -> HttpResponse {
    let result = state
        .front
        .send(ShowConfig {
            span: Span::current(),
        })
        .await;
    envelope::respond(&request_id, result.map_err(Into::into).and_then(|r| r))
}
