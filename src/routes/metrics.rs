//! `GET /metrics`: the Prometheus (OpenMetrics) text exposition. No credentials and no
//! quota: it tells nothing about any caller. With `METRICS_ADDR` set it is served only
//! on that address, so it can stay off the public listener.

use actix_web::{web, HttpResponse};
use iq_actors::metrics::{metrics, PoolUsage};

use crate::state::AppState;

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

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
