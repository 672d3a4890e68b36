//! W3C trace context (`traceparent`, `tracestate`) on incoming requests, so a caller's
//! trace continues into ours. A malformed header is ignored (a new trace starts), never
//! refused: tracing must not change what a client gets.

use actix_web::http::header::{HeaderMap, HeaderName};
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;

use super::ids::{adopt, Remote};

/// The header that says a request continues a trace; without it there is nothing to
/// extract (`tracestate` alone names no parent).
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

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
/// its headers name: the trace id its log lines carry, and its exported parent (whose
/// `sampled` flag the default sampler follows).
pub fn continue_trace(span: &Span, headers: &HeaderMap) {
    // Most requests start a trace: asked by name, not by text, that costs one look-up.
    if !headers.contains_key(TRACEPARENT) {
        return;
    }
    let parent = remote_parent(headers);
    let caller = parent.span();
    let caller = caller.span_context();
    // No valid `traceparent` gives zero ids, which `adopt` ignores.
    adopt(
        span,
        Remote {
            trace: u128::from_be_bytes(caller.trace_id().to_bytes()),
            span: u64::from_be_bytes(caller.span_id().to_bytes()),
            sampled: caller.is_sampled(),
        },
    );
}
