//! `GET /api/v1/config`: site configuration before login (D9). Never counts against quotas.

use actix_web::{get, web};
use serde::Serialize;
use tracing::Span;

use crate::front_actor::{ShowConfig, SiteConfig};
use crate::http::{Answer, HttpError};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Site configuration
///
/// What a client needs before login: the site's name, whether the service is
/// initialised, the datasets and the server's row cap. No credentials; never counted or
/// limited.
#[utoipa::path(
    tag = "site",
    operation_id = "config",
    responses(
        (status = 200, description = "The configuration.", body = SiteConfig),
        (status = 400, response = BadRequest),
        (status = 500, response = InternalError),
    ),
)]
#[get("/config")]
pub async fn config(state: web::Data<AppState>) -> Result<Answer<impl Serialize>, HttpError> {
    let config = state.front.send(ShowConfig {
        span: Span::current(),
    });
    Ok(Answer(config.await??))
}
