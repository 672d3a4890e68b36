//! `GET /healthz` (the process is up and serving) and `GET /readyz` (the database
//! answers and has this build's migrations) for load balancers and Kubernetes probes.
//! Neither needs credentials or counts against any quota. `/readyz` answers 503 when
//! unready, so a probe needs no body parsing.

use actix_web::{web, HttpResponse};
use serde_json::{json, Value};

use crate::http::{envelope, Answer, RequestId};
use crate::migrations;
use crate::state::AppState;

pub async fn healthz() -> Answer<Value> {
    Answer(json!({"status": "up"}))
}

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
