//! `GET /healthz` (the process is up and serving) and `GET /readyz` (the database
//! answers and has this build's migrations) for load balancers and Kubernetes probes.
//! Neither needs credentials or counts against any quota. `/readyz` answers 503 when
//! unready, so a probe needs no body parsing.

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::AppState;
use crate::http::{envelope, RequestId};
use crate::migrations;

pub async fn healthz(request_id: RequestId) -> HttpResponse {
    envelope::success(&request_id, json!({"status": "up"}))
}

pub async fn readyz(request_id: RequestId, state: web::Data<AppState>) -> HttpResponse {
    match migrations::check_ready(&state.pool).await {
        Ok(()) => envelope::success(&request_id, json!({"status": "ready"})),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            envelope::unavailable(&request_id, format!("not ready: {reason}"))
        }
    }
}
