//! `GET /healthz` (the process is up and serving) and `GET /readyz` (the database
//! answers and has this build's migrations) for load balancers and Kubernetes probes.
//! Neither needs credentials or counts against any quota. `/readyz` answers 503 when
//! unready, so a probe needs no body parsing.

use actix_web::{get, web, HttpResponse};
use serde_json::{json, Value};

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
pub async fn healthz() -> Answer<Value> {
    Answer(json!({"status": "up"}))
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
        Ok(()) => envelope::success(&RequestId::current(), json!({"status": "ready"})),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            envelope::unavailable(&RequestId::current(), format!("not ready: {reason}"))
        }
    }
}
