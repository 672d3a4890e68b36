//! A span's or an event's fields as a log line shows them: recorded as values (never
//! as JSON text to parse again), every string of one span in one buffer, and written
//! into a line in the order they were recorded.
//!
//! It must never grow without bound: a string recorded again leaves its old text
//! behind only until there is enough of it to drop.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::Metadata;

use super::json::{key, string};

/// A field's value as the line will show it. A string is a range of its [`Fields`]'
/// text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Value {
    Str { start: usize, end: usize },
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
}

/// The fields of one span or event, in the order they were recorded; a name recorded
/// again replaces its value. Every string value is written into one `text`: a request
/// span's seven strings cost one allocation, not seven.
#[derive(Debug, Default)]
pub(super) struct Fields {
    pub(super) entries: Vec<(&'static str, Value)>,
    pub(super) text: String,
}

/// Text left behind by replaced string values beyond which it is dropped.
pub(super) const STALE_TEXT: usize = 4096;

impl Fields {
    /// Room for every field the span declares (most are recorded later).
    pub(super) fn declared(metadata: &Metadata<'_>) -> Self {
        Fields {
            entries: Vec::with_capacity(metadata.fields().len()),
            text: String::new(),
        }
    }

    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.text.clear();
    }

    pub(super) fn str(&self, start: usize, end: usize) -> &str {
        self.text.get(start..end).unwrap_or_default()
    }

    /// `otel.*` fields steer the trace exporter and say nothing to a reader: they are
    /// never formatted or copied.
    fn kept(field: &Field) -> Option<&'static str> {
        Some(field.name()).filter(|name| !name.starts_with("otel."))
    }

    fn set(&mut self, field: &Field, value: Value) {
        if let Some(name) = Self::kept(field) {
            self.put(name, value);
        }
    }

    /// A string value, written by `write` at the end of the text.
    fn set_text(&mut self, field: &Field, write: impl FnOnce(&mut String)) {
        let Some(name) = Self::kept(field) else {
            return;
        };
        if self.text.capacity() == 0 {
            // Enough for a request span's strings (ids, method, path, route) at once.
            self.text.reserve(128);
        }
        let start = self.text.len();
        write(&mut self.text);
        let end = self.text.len();
        self.put(name, Value::Str { start, end });
    }

    fn put(&mut self, name: &'static str, value: Value) {
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some((_, old)) => {
                if let Value::Str { .. } = std::mem::replace(old, value) {
                    self.drop_text();
                }
            }
            None => self.entries.push((name, value)),
        }
    }

    /// A replaced string's text stays where it was (the new value is written after
    /// it) until there is enough of it to drop: a span that records one field over
    /// and over does not grow without bound.
    fn drop_text(&mut self) {
        let live: usize = self
            .entries
            .iter()
            .map(|(_, value)| match value {
                Value::Str { start, end } => end - start,
                _ => 0,
            })
            .sum();
        if self.text.len() - live <= STALE_TEXT {
            return;
        }
        let mut text = String::with_capacity(live);
        for (_, value) in &mut self.entries {
            if let Value::Str { start, end } = value {
                let from = text.len();
                text.push_str(self.text.get(*start..*end).unwrap_or_default());
                *value = Value::Str {
                    start: from,
                    end: text.len(),
                };
            }
        }
        self.text = text;
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set_text(field, |text| text.push_str(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field, Value::U64(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, Value::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, Value::Bool(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.set_text(field, |text| {
            let _ = write!(text, "{value}");
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.set_text(field, |text| {
            let _ = write!(text, "{value:?}");
        });
    }
}

/// `,"name":value` for each of `fields` whose name is not yet `written`.
pub(super) fn write_fields(out: &mut Vec<u8>, written: &mut Vec<&'static str>, fields: &Fields) {
    for (name, value) in &fields.entries {
        if !written.contains(name) {
            out.push(b',');
            entry(out, name, value, fields);
            written.push(name);
        }
    }
}

/// `"name":value`, the value as JSON (a float that is not finite as `null`).
fn entry(out: &mut Vec<u8>, name: &str, value: &Value, fields: &Fields) {
    key(out, name);
    match *value {
        Value::Str { start, end } => string(out, fields.str(start, end)),
        Value::I64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::F64(n) => {
            let _ = serde_json::to_writer(&mut *out, &n);
        }
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string field recorded again shows its latest value, and the text of the
    /// values it replaced does not pile up.
    #[test]
    fn a_string_recorded_again_replaces_its_text_without_growing() {
        let _default = tracing::subscriber::set_default(tracing_subscriber::registry());
        let span = tracing::info_span!("s", f = tracing::field::Empty, n = 1);
        let field = span.field("f").expect("declared");
        let mut fields = Fields::default();
        fields.record_u64(&span.field("n").expect("declared"), 7);
        for i in 0..10_000 {
            fields.record_str(&field, &format!("value number {i}"));
        }
        assert_eq!(fields.entries.len(), 2);
        let Value::Str { start, end } = fields.entries[1].1 else {
            panic!("{:?}", fields.entries);
        };
        assert_eq!(fields.str(start, end), "value number 9999");
        assert!(
            fields.text.len() <= STALE_TEXT + 64,
            "{}",
            fields.text.len()
        );
        assert_eq!(fields.entries[0].1, Value::U64(7));
    }
}
