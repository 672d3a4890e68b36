//! What a finished request leaves behind besides its span: its observation in the
//! request metrics (by route, dataset and business code) and its access-log line,
//! `"request completed"`, at `info` or, for probes, scrapes and the lines `ACCESS_LOG`
//! leaves out, at `debug`.

use std::time::Instant;

use iq_actors::metrics::{metrics, RequestLabels};
use tracing::Span;

use super::access_log::AccessLog;
use crate::telemetry::ACCESS_TARGET;

/// Records a request on `route` answered with `status` and business `code`, started
/// at `started`, in the metrics and the access log (inside `span`).
pub(super) fn completed(
    span: &Span,
    route: String,
    dataset: &'static str,
    status: u16,
    code: u32,
    access_log: AccessLog,
    started: Instant,
) {
    // Probes and scrapes arrive every few seconds from machines, not people: their
    // lines are debug, so the access log stays the callers' (failures still show).
    let routine = matches!(route.as_str(), "/healthz" | "/readyz" | "/metrics") && status < 500;
    let kept = access_log.keeps(status);
    metrics()
        .requests
        .get_or_create(&RequestLabels {
            route,
            dataset,
            code,
        })
        .observe(started.elapsed().as_secs_f64());
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    // Its own target, so traces can leave it out: the request span already carries the
    // status, the code and (as its length) the latency, and copying every access line
    // into its span as an event doubled what the exporter encoded per request.
    span.in_scope(|| {
        if routine || !kept {
            tracing::debug!(target: ACCESS_TARGET, latency_ms, status, code, "request completed");
        } else {
            tracing::info!(target: ACCESS_TARGET, latency_ms, status, code, "request completed");
        }
    });
}
