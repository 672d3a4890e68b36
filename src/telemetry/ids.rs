//! Trace and span ids of every span: what log lines carry, and what exported spans
//! ([`super::export`]) are named by.
//!
//! A span continues its parent's trace, a request continues the trace its caller named
//! ([`adopt`]), and any other span starts a trace of its own. Ids are drawn for every
//! span, exported or not: a log line of a request that is not sampled still names its
//! trace.
//!
//! It keeps ids only; it must never decide what is exported.

use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id};
use tracing::{Span, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// A span's ids, kept in its extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanIds {
    pub trace: u128,
    pub span: u64,
    /// The caller's span this one continues ([`adopt`]), if any.
    pub remote: Option<Remote>,
}

/// A span in another process that a request continues: the W3C `traceparent` of its
/// caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remote {
    pub trace: u128,
    pub span: u64,
    /// Whether the caller records its trace (the `sampled` flag).
    pub sampled: bool,
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
            remote: None,
        };
        span.extensions_mut().insert(ids);
    }
}

/// Makes `span` (just created, before any child) continue the trace of `remote`, the
/// span of a caller. Does nothing when this layer is not installed.
pub fn adopt(span: &Span, remote: Remote) {
    if remote.trace == 0 || remote.span == 0 {
        return;
    }
    span.with_subscriber(|(id, dispatch)| {
        let Some(registry) = dispatch.downcast_ref::<Registry>() else {
            return;
        };
        if let Some(span) = registry.span(id) {
            if let Some(ids) = span.extensions_mut().get_mut::<SpanIds>() {
                ids.trace = remote.trace;
                ids.remote = Some(remote);
            }
        }
    });
}

/// A span's ids, if this layer gave it some.
pub fn of<S>(span: &tracing_subscriber::registry::SpanRef<'_, S>) -> Option<SpanIds>
where
    S: for<'a> LookupSpan<'a>,
{
    span.extensions().get::<SpanIds>().copied()
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
            adopt(
                &root,
                Remote {
                    trace: 0xabc,
                    span: 0xdef,
                    sampled: true,
                },
            );
            let child = tracing::info_span!(parent: &root, "front");
            let other = tracing::info_span!("other");
            (read(&root), read(&child), read(&other))
        });
        assert_eq!(root.trace, 0xabc);
        assert_eq!(root.remote.map(|r| r.span), Some(0xdef));
        assert_eq!(
            child.remote, None,
            "only the request continues the caller's span"
        );
        assert_eq!(child.trace, 0xabc, "a child continues its parent's trace");
        assert_ne!(child.span, root.span);
        assert_ne!(other.trace, 0xabc, "a span without a parent starts its own");
    }
}
