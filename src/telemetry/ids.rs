//! Trace and span ids of every span, the ids log lines carry.
//!
//! When traces are exported, a span's ids are its OpenTelemetry span's
//! (`tracing-opentelemetry`'s). Otherwise [`Ids`] gives each span ids of its own, far
//! cheaper than building OpenTelemetry spans nobody receives (docs/performance.md): a
//! span continues its parent's trace, a request continues the trace its caller named
//! ([`adopt`]), and any other span starts a trace of its own. Either way a log line of a
//! request names its trace.
//!
//! It keeps ids only; it must never decide what is exported.

use opentelemetry::trace::TraceContextExt;
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id};
use tracing::{Span, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::{LookupSpan, Registry, SpanRef};

/// A span's ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanIds {
    pub trace: u128,
    pub span: u64,
}

/// The layer. It records nothing of its own, so it says how verbose the spans it must
/// name can be: the most verbose level any output records. Without that bound the whole
/// subscriber would have no maximum level, and every `trace!` of every crate (actix-http
/// has some on every request) would be dispatched and filtered one by one.
pub struct Ids {
    most_verbose: LevelFilter,
}

impl Ids {
    /// Ids for spans up to `most_verbose`: pass the most verbose level any other layer
    /// records.
    pub fn up_to(most_verbose: LevelFilter) -> Self {
        Ids { most_verbose }
    }
}

/// A random id that is not zero (zero means "no id" in W3C trace context).
fn nonzero<T: Default + PartialEq>(draw: impl Fn() -> T) -> T {
    loop {
        let id = draw();
        if id != T::default() {
            return id;
        }
    }
}

impl<S> Layer<S> for Ids
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.most_verbose)
    }

    fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let parent = span
            .parent()
            .and_then(|parent| parent.extensions().get::<SpanIds>().copied());
        let ids = SpanIds {
            trace: parent.map_or_else(|| nonzero(rand::random::<u128>), |p| p.trace),
            span: nonzero(rand::random::<u64>),
        };
        span.extensions_mut().insert(ids);
    }
}

/// Makes `span` (just created, before any child) continue the trace `trace` of its
/// caller. Does nothing when this layer is not installed, or for a zero id.
pub fn adopt(span: &Span, trace: u128) {
    if trace == 0 {
        return;
    }
    span.with_subscriber(|(id, dispatch)| {
        let Some(registry) = dispatch.downcast_ref::<Registry>() else {
            return;
        };
        if let Some(span) = registry.span(id) {
            if let Some(ids) = span.extensions_mut().get_mut::<SpanIds>() {
                ids.trace = trace;
            }
        }
    });
}

/// A span's ids: those [`Ids`] gave it, else its OpenTelemetry span's. Call it holding
/// no guard of the span's extensions.
pub fn of<S>(span: &SpanRef<'_, S>) -> Option<SpanIds>
where
    S: for<'a> LookupSpan<'a>,
{
    if let Some(ids) = span.extensions().get::<SpanIds>().copied() {
        return Some(ids);
    }
    let context = tracing::dispatcher::get_default(|dispatch| {
        tracing_opentelemetry::get_otel_context(&span.id(), dispatch)
    })?;
    let exported = context.span();
    let exported = exported.span_context();
    let ids = SpanIds {
        trace: u128::from_be_bytes(exported.trace_id().to_bytes()),
        span: u64::from_be_bytes(exported.span_id().to_bytes()),
    };
    (ids.trace != 0 && ids.span != 0).then_some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    /// A span's ids, read back through the registry.
    fn read(span: &Span) -> SpanIds {
        span.with_subscriber(|(id, dispatch)| {
            let registry = dispatch.downcast_ref::<Registry>().unwrap();
            of(&registry.span(id).unwrap()).unwrap()
        })
        .unwrap()
    }

    #[test]
    fn children_continue_their_parents_trace_and_an_adopted_trace() {
        let subscriber = tracing_subscriber::registry().with(Ids::up_to(LevelFilter::TRACE));
        let (root, child, other) = tracing::subscriber::with_default(subscriber, || {
            let root = tracing::info_span!("request");
            adopt(&root, 0xabc);
            let child = tracing::info_span!(parent: &root, "front");
            let other = tracing::info_span!("other");
            (read(&root), read(&child), read(&other))
        });
        assert_eq!(root.trace, 0xabc);
        assert_eq!(child.trace, 0xabc, "a child continues its parent's trace");
        assert_ne!(child.span, root.span);
        assert_ne!(other.trace, 0xabc, "a span without a parent starts its own");
    }
}
