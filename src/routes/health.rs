//! `GET /healthz` (the process is up and serving) and `GET /readyz` (the database
//! answers and has this build's migrations) for load balancers and Kubernetes probes.
//! Neither needs credentials or counts against any quota. `/readyz` answers 503 when
//! unready, so a probe needs no body parsing.

use actix_web::{get, web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use crate::http::{envelope, Answer, RequestId};
use crate::migrations;
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Liveness
///
/// 200 while the process serves.
#[utoipa::path(
    tag = "operations",
    operation_id = "healthz",
    responses((status = 200, description = "The process is up.", body = Up)),
)]
#[get("/healthz")]
pub async fn healthz() -> Answer<Up> {
    Answer(Up {
        status: UpStatus::Up,
    })
}

/// `/healthz`: `{"status": "up"}`.
#[derive(Serialize, ToSchema)]
pub struct Up {
    #[schema(inline)]
    status: UpStatus,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum UpStatus {
    Up,
}

/// `/readyz`: `{"status": "ready"}`.
#[derive(Serialize, ToSchema)]
pub struct Ready {
    #[schema(inline)]
    status: ReadyStatus,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum ReadyStatus {
    Ready,
}

/// Readiness
///
/// 200 when the database answers and has this build's migrations; otherwise 503 with
/// code 50000 and the reason, so a probe need not parse the body.
#[utoipa::path(
    tag = "operations",
    operation_id = "readyz",
    responses(
        (status = 200, description = "Ready to serve.", body = Ready),
        (status = 503, response = inline(NotReady)),
    ),
)]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.draining.is_set() {
        return envelope::unavailable(&RequestId::current(), "not ready: shutting down".into());
    }
    match migrations::check_ready(&state.pool).await {
        Ok(()) => envelope::success(
            &RequestId::current(),
            Ready {
                status: ReadyStatus::Ready,
            },
        ),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            envelope::unavailable(&RequestId::current(), format!("not ready: {reason}"))
        }
    }
}
