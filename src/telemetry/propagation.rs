//! W3C trace context (`traceparent`, `tracestate`) on incoming requests, so a caller's
//! trace continues into ours. A malformed header is ignored (a new trace starts), never
//! refused: tracing must not change what a client gets.

use actix_web::http::header::HeaderMap;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// The remote parent the request's headers name, if any (an empty context otherwise).
pub fn remote_parent(headers: &HeaderMap) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&Headers(headers))
}

/// Makes the request's root `span` (just created, not yet entered) continue the trace
/// its headers name: its exported parent when spans are exported, and the trace id its
/// log lines carry either way.
pub fn continue_trace(span: &Span, headers: &HeaderMap) {
    let parent = remote_parent(headers);
    let trace = parent.span().span_context().trace_id();
    super::ids::adopt(span, u128::from_be_bytes(trace.to_bytes()));
    let _ = span.set_parent(parent);
}
