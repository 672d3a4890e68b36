//! What the export layer keeps of a span until it closes ([`Recording`]), and the one
//! conversion of a `tracing` field into an OpenTelemetry value ([`FieldValues`]) that
//! spans and events both go through.
//!
//! It only keeps and converts; what is exported, and when, is the layer's.

use std::borrow::Cow;
use std::fmt;
use std::time::SystemTime;

use opentelemetry::trace::{Event as SpanEvent, SpanKind, Status};
use opentelemetry::{Key, KeyValue, Value};
use tracing::field::{Field, Visit};

use super::Decision;

/// What an exported span will hold, kept in its extensions until it closes.
pub(super) struct Recording {
    pub decision: Decision,
    /// The nearest exported ancestor in this process.
    pub parent: Option<u64>,
    pub name: Cow<'static, str>,
    pub kind: SpanKind,
    pub status: Status,
    pub start: SystemTime,
    pub attributes: Vec<KeyValue>,
    pub events: Vec<SpanEvent>,
    pub dropped_events: u32,
}

impl Recording {
    /// A field of the span: `otel.name`, `otel.kind` and `otel.status_code` steer it,
    /// other `otel.*` fields are ignored, and any other field is an attribute (a field
    /// recorded again replaces its value).
    pub fn put(&mut self, name: &'static str, value: Value) {
        match name {
            "otel.name" => self.name = Cow::Owned(text(value)),
            "otel.kind" => {
                self.kind = match value.as_str().as_ref() {
                    "server" => SpanKind::Server,
                    "client" => SpanKind::Client,
                    "producer" => SpanKind::Producer,
                    "consumer" => SpanKind::Consumer,
                    _ => SpanKind::Internal,
                }
            }
            "otel.status_code" => {
                self.status = match value.as_str().as_ref() {
                    t if t.eq_ignore_ascii_case("error") => Status::error(""),
                    t if t.eq_ignore_ascii_case("ok") => Status::Ok,
                    _ => Status::Unset,
                }
            }
            name if name.starts_with("otel.") => {}
            name => {
                let key = Key::from_static_str(name);
                match self.attributes.iter_mut().find(|kv| kv.key == key) {
                    Some(kv) => kv.value = value,
                    None => self.attributes.push(KeyValue::new(key, value)),
                }
            }
        }
    }
}

/// A value as text, without copying a string that is one already.
pub(super) fn text(value: Value) -> String {
    match value {
        Value::String(text) => text.into(),
        other => other.as_str().into_owned(),
    }
}

/// Hands each field to the closure as a name and a value: text (and `Debug` or
/// `Display` values, formatted) as strings, integers as `i64` (a `u64` past its range
/// as decimal text), booleans and floats as themselves.
pub(super) struct FieldValues<F>(pub F);

impl<F: FnMut(&'static str, Value)> Visit for FieldValues<F> {
    fn record_str(&mut self, field: &Field, value: &str) {
        (self.0)(field.name(), Value::from(value.to_owned()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        (self.0)(field.name(), Value::from(format!("{value:?}")));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        (self.0)(field.name(), Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        let value =
            i64::try_from(value).map_or_else(|_| Value::from(value.to_string()), Value::I64);
        (self.0)(field.name(), value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        (self.0)(field.name(), Value::Bool(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        (self.0)(field.name(), Value::F64(value));
    }
}
