//! `GET /metrics`: the Prometheus (OpenMetrics) text exposition. No credentials and no
//! quota: it tells nothing about any caller. With `METRICS_ADDR` set it is served only
//! on that address, so it can stay off the public listener.

use actix_web::{get, web, HttpResponse};
use iq_actors::metrics::{metrics, PoolUsage};

use crate::state::AppState;

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Prometheus metrics
///
/// The OpenMetrics text exposition. Served on its own listener (`METRICS_ADDR`, default
/// `127.0.0.1:9464`), and on the public one only with `METRICS_ADDR=api`. What each
/// metric means: docs/operations.md.
#[utoipa::path(
    tag = "operations",
    operation_id = "metrics",
    responses(
        (
            status = 200,
            description = "The metrics.",
            content_type = "application/openmetrics-text",
            body = String,
        ),
    ),
)]
#[get("/metrics")]
pub async fn metrics_text(state: web::Data<AppState>) -> HttpResponse {
    // The shared pool and the workers' read pools: one budget, `DB_POOL_SIZE`.
    let mut usage = PoolUsage::default();
    for pool in std::iter::once(&state.pool).chain(state.front.read_pools()) {
        let status = pool.status();
        usage.max += status.max_size;
        usage.in_use += status.size.saturating_sub(status.available);
        usage.idle += status.available;
        usage.waiting += status.waiting;
    }
    HttpResponse::Ok()
        .content_type(CONTENT_TYPE)
        .body(metrics().render(usage))
}
