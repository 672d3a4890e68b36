//! `GET /api/v1/config`: site configuration before login (D9). Never counts against quotas.

use actix_web::web;
use serde::Serialize;
use tracing::Span;

use crate::front::ShowConfig;
use crate::http::{Answer, HttpError};
use crate::state::AppState;

pub async fn config(state: web::Data<AppState>) -> Result<Answer<impl Serialize>, HttpError> {
    let config = state.front.send(ShowConfig {
        span: Span::current(),
    });
    Ok(Answer(config.await??))
}
