//! The JSON log line: one object per event with its time, level, target, the fields of
//! every span it happened in (so `request_id` is on every line of a request, with the
//! nearest span winning a clash), `trace_id` and `span_id` of the span it happened in,
//! and its own fields (which win over span fields).
//!
//! It must never panic or block: a line it cannot build is written without the parts it
//! could not read.

use std::fmt;
use std::sync::{Arc, OnceLock};

use opentelemetry::trace::TraceContextExt;
use serde_json::{Map, Value};
use tracing::dispatcher::WeakDispatch;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

pub struct JsonLines {
    /// The subscriber this format belongs to, set right after it is built; trace ids
    /// are read through it (the global dispatcher is unusable inside an event).
    dispatch: Arc<OnceLock<WeakDispatch>>,
}

impl JsonLines {
    pub fn new(dispatch: Arc<OnceLock<WeakDispatch>>) -> Self {
        JsonLines { dispatch }
    }
}

impl<S> FormatEvent<S, JsonFields> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                .into(),
        );
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());

        if let Some(scope) = ctx.event_scope() {
            let mut names = Vec::new();
            let mut leaf = None;
            for span in scope.from_root() {
                names.push(span.name());
                leaf = Some(span.id());
                let extensions = span.extensions();
                let Some(fields) = extensions.get::<FormattedFields<JsonFields>>() else {
                    continue;
                };
                if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(fields) {
                    // `otel.*` fields steer the trace exporter; they say nothing to a reader.
                    line.extend(fields.into_iter().filter(|(k, _)| !k.starts_with("otel.")));
                }
            }
            line.insert("span".into(), names.join(">").into());
            if let Some((trace_id, span_id)) = leaf.and_then(|id| self.ids(&id)) {
                line.insert("trace_id".into(), trace_id.into());
                line.insert("span_id".into(), span_id.into());
            }
        }

        event.record(&mut Fields(&mut line));
        let text = serde_json::to_string(&line).map_err(|_| fmt::Error)?;
        writeln!(writer, "{text}")
    }
}

impl JsonLines {
    /// The OpenTelemetry trace and span id of a span, as lower-case hex.
    fn ids(&self, id: &tracing::span::Id) -> Option<(String, String)> {
        let dispatch = self.dispatch.get()?.upgrade()?;
        let context = tracing_opentelemetry::get_otel_context(id, &dispatch)?;
        let span = context.span();
        let span_context = span.span_context();
        span_context.is_valid().then(|| {
            (
                span_context.trace_id().to_string(),
                span_context.span_id().to_string(),
            )
        })
    }
}

/// An event's fields as JSON values.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), value.to_string().into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}
