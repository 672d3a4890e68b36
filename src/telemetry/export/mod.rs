//! Spans exported over OTLP, built straight from `tracing`'s spans.
//!
//! For each span that may be exported this layer keeps what the export needs: its start
//! time, its fields as attributes, its name, kind and status, and its events. When the
//! span closes, it hands the OpenTelemetry SDK's batch processor a finished
//! [`SpanData`]; batching, the OTLP encoding and the HTTP export stay the SDK's. Ids
//! come from [`super::ids`], the same ids log lines carry.
//!
//! Why not `tracing-opentelemetry`: it keeps an OpenTelemetry span builder (with every
//! attribute) for every span, sampled or not, starts an SDK span with a context clone
//! for every span that gets a child, and builds the SDK's span once more at close. At
//! production's sampling (one trace in ten) a cached key request ran 11.6% more
//! instructions with it (0.34, configured as lean as it goes) than with this layer, both
//! with the same exporter; with every request traced the two cost the same
//! (docs/performance.md, "Traces on maintained crates"). What
//! is kept here is what the exported span holds, and nothing else; an unsampled trace
//! costs its ids.
//!
//! What it follows of OpenTelemetry's conventions for `tracing` spans:
//! - the fields `otel.name`, `otel.kind` (`server`, `client`, `producer`, `consumer`,
//!   `internal`) and `otel.status_code` (`error`, `ok`) steer the span; other `otel.*`
//!   fields are ignored, and every other field is an attribute;
//! - events at `info` or above in an exported span become its events (at most
//!   [`MAX_EVENTS`]); an `error` event makes the span's status an error;
//! - spans and events below `info`, and those of the targets it is told to leave out,
//!   are not exported; a span under one that is not exported hangs from its nearest
//!   exported ancestor;
//! - sampling: the configured sampler (`OTEL_TRACES_SAMPLER`) decides once per trace,
//!   at the trace's first span in this process, with the caller's span as the parent
//!   when a request continues one ([`super::ids::adopt`]); every other span of the trace
//!   follows that decision. The decision waits until the span's first child or its
//!   close, so that a request's span has adopted its caller's trace by then. A
//!   caller's `tracestate` is not carried into exported spans.
//!
//! It must never block or panic on a request's thread: a closed span goes to the
//! processor's bounded queue, which drops (and counts) what it cannot hold.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{
    Event as SpanEvent, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags,
    TraceId, TraceState,
};
use opentelemetry::{Context as OtelContext, InstrumentationScope, Key, KeyValue};
use opentelemetry_sdk::trace::{
    SamplingDecision, ShouldSample, SpanData, SpanEvents, SpanLinks, SpanProcessor,
};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::ids::SpanIds;
use record::{FieldValues, Recording};

mod record;

/// Events kept per span; more are counted as dropped. A span is a request or a step of
/// one, so a span with more than this is logging in a loop.
pub const MAX_EVENTS: usize = 32;

/// The layer. Install it after [`super::ids::Ids`], which must have given a span its
/// ids before this layer sees it.
pub struct Export {
    processor: Arc<dyn SpanProcessor>,
    sampler: Box<dyn ShouldSample>,
    scope: InstrumentationScope,
    /// Target prefixes whose spans and events are never exported.
    left_out: Vec<&'static str>,
}

impl Export {
    /// Spans of the scope `scope` go to `processor`, traces sampled by `sampler`. Spans
    /// and events whose target starts with one of `left_out` are never exported: the
    /// exporter's own crates (whose events would become spans of the traces they
    /// export) and lines whose span already says what they say.
    pub fn new(
        processor: Arc<dyn SpanProcessor>,
        sampler: Box<dyn ShouldSample>,
        scope: &'static str,
        left_out: &[&'static str],
    ) -> Self {
        Export {
            processor,
            sampler,
            scope: InstrumentationScope::builder(scope).build(),
            left_out: left_out.to_vec(),
        }
    }

    fn exports(&self, meta: &Metadata<'_>) -> bool {
        *meta.level() <= Level::INFO && !self.left_out.iter().any(|p| meta.target().starts_with(p))
    }

    /// Whether the trace whose first span in this process is `recording` (with `ids`)
    /// is exported.
    fn decide(&self, ids: &SpanIds, recording: &Recording) -> Decision {
        let parent = ids.remote.map(|remote| {
            let flags = match remote.sampled {
                true => TraceFlags::SAMPLED,
                false => TraceFlags::default(),
            };
            OtelContext::new().with_remote_span_context(SpanContext::new(
                TraceId::from(remote.trace),
                SpanId::from(remote.span),
                flags,
                true,
                TraceState::default(),
            ))
        });
        let result = self.sampler.should_sample(
            parent.as_ref(),
            TraceId::from(ids.trace),
            &recording.name,
            &recording.kind,
            &recording.attributes,
            &[],
        );
        match result.decision {
            SamplingDecision::RecordAndSample => Decision::Export,
            // Recorded but not sampled is not exported by the SDK either.
            SamplingDecision::RecordOnly | SamplingDecision::Drop => Decision::Drop,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decision {
    /// The first span of a trace, before its first child or its close.
    Pending,
    Export,
    Drop,
}

impl<S> Layer<S> for Export
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// Nothing below `info` is exported: the subscriber need not dispatch it for traces.
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::INFO)
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let meta = attrs.metadata();
        if !self.exports(meta) {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        // The nearest exported ancestor decides: its trace's decision, and the parent.
        let mut parent = None;
        for ancestor in span.scope().skip(1) {
            let mut extensions = ancestor.extensions_mut();
            let Some(ids) = extensions.get_mut::<SpanIds>().map(|ids| *ids) else {
                continue;
            };
            let Some(recording) = extensions.get_mut::<Recording>() else {
                continue;
            };
            if recording.decision == Decision::Pending {
                recording.decision = self.decide(&ids, recording);
            }
            if recording.decision == Decision::Drop {
                return;
            }
            parent = Some(ids.span);
            break;
        }
        let mut recording = Recording {
            decision: match parent {
                Some(_) => Decision::Export,
                None => Decision::Pending,
            },
            parent,
            name: Cow::Borrowed(meta.name()),
            kind: SpanKind::Internal,
            status: Status::Unset,
            start: SystemTime::now(),
            attributes: Vec::with_capacity(meta.fields().len()),
            events: Vec::new(),
            dropped_events: 0,
        };
        attrs.record(&mut FieldValues(|name, value| recording.put(name, value)));
        span.extensions_mut().insert(recording);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(recording) = extensions.get_mut::<Recording>() {
            if recording.decision != Decision::Drop {
                values.record(&mut FieldValues(|name, value| recording.put(name, value)));
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !self.exports(meta) {
            return;
        }
        let Some(scope) = ctx.event_scope(event) else {
            return;
        };
        for span in scope {
            let mut extensions = span.extensions_mut();
            let Some(recording) = extensions.get_mut::<Recording>() else {
                continue;
            };
            if recording.decision == Decision::Drop {
                return;
            }
            if *meta.level() == Level::ERROR {
                recording.status = Status::error("");
            }
            if recording.events.len() >= MAX_EVENTS {
                recording.dropped_events += 1;
                return;
            }
            let mut message = None;
            let mut attributes = vec![KeyValue::new("level", meta.level().as_str())];
            event.record(&mut FieldValues(|name, value| match name {
                "message" => message = Some(record::text(value)),
                name => attributes.push(KeyValue::new(Key::from_static_str(name), value)),
            }));
            let name = message.unwrap_or_else(|| meta.name().to_owned());
            recording
                .events
                .push(SpanEvent::new(name, SystemTime::now(), attributes, 0));
            return;
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let (ids, mut recording) = {
            let mut extensions = span.extensions_mut();
            let Some(recording) = extensions.remove::<Recording>() else {
                return;
            };
            let Some(ids) = extensions.get_mut::<SpanIds>().map(|ids| *ids) else {
                return;
            };
            (ids, recording)
        };
        if recording.decision == Decision::Pending {
            recording.decision = self.decide(&ids, &recording);
        }
        if recording.decision != Decision::Export {
            return;
        }
        let (parent, parent_is_remote) = match (recording.parent, ids.remote) {
            (Some(local), _) => (SpanId::from(local), false),
            (None, Some(remote)) => (SpanId::from(remote.span), true),
            (None, None) => (SpanId::INVALID, false),
        };
        let mut events = SpanEvents::default();
        events.events = recording.events;
        events.dropped_count = recording.dropped_events;
        self.processor.on_end(SpanData {
            span_context: SpanContext::new(
                TraceId::from(ids.trace),
                SpanId::from(ids.span),
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent,
            parent_span_is_remote: parent_is_remote,
            span_kind: recording.kind,
            name: recording.name,
            start_time: recording.start,
            end_time: SystemTime::now(),
            attributes: recording.attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status: recording.status,
            instrumentation_scope: self.scope.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use opentelemetry::Value;
    use opentelemetry_sdk::trace::Sampler;
    use tracing_subscriber::layer::SubscriberExt;

    use super::super::ids::{adopt, Ids, Remote};
    use super::*;

    /// A processor that keeps what it is handed.
    #[derive(Debug, Default)]
    struct Kept(Mutex<Vec<SpanData>>);

    impl SpanProcessor for Kept {
        fn on_start(&self, _: &mut opentelemetry_sdk::trace::Span, _: &OtelContext) {}
        fn on_end(&self, span: SpanData) {
            self.0.lock().unwrap().push(span);
        }
        fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
        fn shutdown_with_timeout(
            &self,
            _: std::time::Duration,
        ) -> opentelemetry_sdk::error::OTelSdkResult {
            Ok(())
        }
    }

    /// The spans `f` exports under `sampler`, in the order they closed.
    fn exported(sampler: Sampler, f: impl FnOnce()) -> Vec<SpanData> {
        let kept = Arc::new(Kept::default());
        let export = Export::new(kept.clone(), Box::new(sampler), "test", &["noisy"]);
        let subscriber = tracing_subscriber::registry()
            .with(Ids::up_to(tracing::level_filters::LevelFilter::TRACE))
            .with(export);
        tracing::subscriber::with_default(subscriber, f);
        let spans = std::mem::take(&mut *kept.0.lock().unwrap());
        spans
    }

    fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span {name}: {spans:#?}"))
    }

    fn always() -> Sampler {
        Sampler::ParentBased(Box::new(Sampler::AlwaysOn))
    }

    #[test]
    fn a_trace_is_exported_with_its_fields_steering_and_parents() {
        let spans = exported(always(), || {
            let root = tracing::info_span!(
                "request",
                otel.name = tracing::field::Empty,
                otel.kind = "server",
                otel.status_code = tracing::field::Empty,
                rows = 3u64,
                hit = true,
                path = %"/a",
                code = tracing::field::Empty,
            );
            root.in_scope(|| {
                tracing::info_span!("step", otel.kind = "client").in_scope(|| {
                    tracing::debug_span!("hidden").in_scope(|| {
                        let _grandchild = tracing::info_span!("deep").entered();
                    });
                });
                tracing::error!(reason = "boom", "it failed");
            });
            root.record("code", 40102);
            root.record("code", 0);
            root.record("otel.name", "POST /q");
        });
        assert_eq!(spans.len(), 3, "the debug span is not exported: {spans:#?}");
        let root = named(&spans, "POST /q");
        let step = named(&spans, "step");
        let deep = named(&spans, "deep");
        assert_eq!(root.span_kind, SpanKind::Server);
        assert_eq!(step.span_kind, SpanKind::Client);
        assert_eq!(deep.span_kind, SpanKind::Internal);
        assert_eq!(root.parent_span_id, SpanId::INVALID);
        assert_eq!(step.parent_span_id, root.span_context.span_id());
        assert_eq!(
            deep.parent_span_id,
            step.span_context.span_id(),
            "hangs from its nearest exported ancestor"
        );
        for span in [step, deep] {
            assert_eq!(span.span_context.trace_id(), root.span_context.trace_id());
        }
        assert_eq!(attr(root, "rows"), Some(&Value::I64(3)));
        assert_eq!(attr(root, "hit"), Some(&Value::Bool(true)));
        assert_eq!(attr(root, "path"), Some(&Value::from("/a")));
        assert_eq!(
            attr(root, "code"),
            Some(&Value::I64(0)),
            "recorded again: replaced"
        );
        assert!(
            root.attributes
                .iter()
                .all(|kv| !kv.key.as_str().starts_with("otel.")),
            "{root:#?}"
        );
        assert_eq!(root.events.events.len(), 1);
        let event = &root.events.events[0];
        assert_eq!(event.name, "it failed");
        assert!(event
            .attributes
            .iter()
            .any(|kv| kv.key.as_str() == "reason" && kv.value == Value::from("boom")));
        assert!(
            matches!(root.status, Status::Error { .. }),
            "an error event"
        );
        assert!(root.span_context.is_sampled());
        assert!(root.end_time >= root.start_time);
    }

    #[test]
    fn the_status_code_field_sets_the_status() {
        let spans = exported(always(), || {
            let span = tracing::info_span!("request", otel.status_code = tracing::field::Empty);
            span.record("otel.status_code", "error");
        });
        assert!(matches!(spans[0].status, Status::Error { .. }));
    }

    #[test]
    fn a_request_continues_its_callers_span_and_decision() {
        let remote = |sampled| Remote {
            trace: 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736,
            span: 0x00f0_67aa_0ba9_02b7,
            sampled,
        };
        let spans = exported(always(), || {
            let root = tracing::info_span!("request");
            adopt(&root, remote(true));
            root.in_scope(|| tracing::info_span!("step").in_scope(|| {}));
        });
        assert_eq!(spans.len(), 2);
        let root = named(&spans, "request");
        assert_eq!(
            root.span_context.trace_id(),
            TraceId::from(remote(true).trace)
        );
        assert_eq!(root.parent_span_id, SpanId::from(remote(true).span));
        assert!(root.parent_span_is_remote);
        assert!(!named(&spans, "step").parent_span_is_remote);

        let spans = exported(always(), || {
            let root = tracing::info_span!("request");
            adopt(&root, remote(false));
            root.in_scope(|| tracing::info_span!("step").in_scope(|| {}));
        });
        assert!(
            spans.is_empty(),
            "the caller does not record it: {spans:#?}"
        );
    }

    #[test]
    fn a_trace_sampled_out_exports_nothing_and_others_are_their_own() {
        let spans = exported(Sampler::AlwaysOff, || {
            tracing::info_span!("request").in_scope(|| tracing::info_span!("step").in_scope(|| {}));
        });
        assert!(spans.is_empty(), "{spans:#?}");

        let spans = exported(always(), || {
            tracing::info_span!("one").in_scope(|| {});
            tracing::info_span!("two").in_scope(|| {});
            tracing::info_span!(target: "noisy::crate", "left out").in_scope(|| {});
        });
        assert_eq!(spans.len(), 2, "{spans:#?}");
        assert_ne!(
            spans[0].span_context.trace_id(),
            spans[1].span_context.trace_id(),
            "a span without a parent starts a trace"
        );
    }

    #[test]
    fn events_beyond_the_bound_are_counted_not_kept() {
        let spans = exported(always(), || {
            tracing::info_span!("request").in_scope(|| {
                for i in 0..MAX_EVENTS + 3 {
                    tracing::info!(i, "again");
                }
                tracing::info!(target: "noisy", "left out");
            });
        });
        assert_eq!(spans[0].events.events.len(), MAX_EVENTS);
        assert_eq!(spans[0].events.dropped_count, 3);
    }
}
