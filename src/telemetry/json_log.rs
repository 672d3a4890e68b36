//! The JSON log line: one object per event with its time, level, target, its own
//! fields, the fields of every span it happened in (so `request_id` is on every line of
//! a request), the span path, and the `trace_id` and `span_id` of the span it happened
//! in. When two carry the same name, the event's own field wins, then the nearest span.
//!
//! A [`Layer`] of its own rather than `tracing-subscriber`'s JSON formatter: that one
//! keeps each span's fields as JSON text and re-parses it on every `record` and every
//! event, which cost over a third of a cached request. Here a span's fields are kept as
//! values in the span's extensions and a line is written straight into a reused buffer.
//!
//! It filters for itself ([`JsonLog::filtered`]): as a per-layer filter
//! (`Layer::with_filter`), `RUST_LOG`'s targets and levels made the registry look the
//! span up again on every enter, exit, record and close of every span, about 4% of a
//! cached request's CPU. A span the filter leaves out gets no fields here and does not
//! show in a line's span path or ids, exactly as a per-layer filter would hide it.
//!
//! It must never panic or block a request: a line goes to the log writer's buffer, and
//! a value it cannot read is left out.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

pub struct JsonLog<W> {
    writer: W,
    /// What is written; `None`: everything that reaches the layer (a per-layer filter
    /// around it decides).
    filter: Option<Targets>,
}

impl<W> JsonLog<W> {
    /// Writes every event that reaches it: for use behind a filter.
    pub fn new(writer: W) -> Self {
        JsonLog {
            writer,
            filter: None,
        }
    }

    /// Writes the events `filter` lets through, with the fields of the spans it lets
    /// through.
    pub fn filtered(writer: W, filter: Targets) -> Self {
        JsonLog {
            writer,
            filter: Some(filter),
        }
    }

    fn lets_through(&self, meta: &Metadata<'_>) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.would_enable(meta.target(), meta.level()))
    }
}

/// A field's value as the line will show it. A string is a range of its [`Fields`]'
/// text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
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
struct Fields {
    entries: Vec<(&'static str, Value)>,
    text: String,
}

/// Text left behind by replaced string values beyond which it is dropped.
const STALE_TEXT: usize = 4096;

impl Fields {
    /// Room for every field the span declares (most are recorded later).
    fn declared(metadata: &Metadata<'_>) -> Self {
        Fields {
            entries: Vec::with_capacity(metadata.fields().len()),
            text: String::new(),
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.text.clear();
    }

    fn str(&self, start: usize, end: usize) -> &str {
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

/// What writing a line needs besides the line itself, kept per thread and reused.
#[derive(Default)]
struct Scratch {
    line: Vec<u8>,
    /// The event's own fields.
    own: Fields,
    /// The names already written (the first value of a name wins).
    written: Vec<&'static str>,
    /// The names of the spans shown, nearest first.
    path: Vec<&'static str>,
}

impl<S, W> Layer<S> for JsonLog<W>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + 'static,
{
    /// The most verbose level the filter lets through, so that the subscriber as a
    /// whole keeps a maximum level (see `telemetry::init`).
    fn max_level_hint(&self) -> Option<LevelFilter> {
        match &self.filter {
            Some(filter) => <Targets as Layer<S>>::max_level_hint(filter),
            None => None,
        }
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !self.lets_through(attrs.metadata()) {
            return;
        }
        let mut fields = Fields::declared(attrs.metadata());
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<Fields>() {
                values.record(fields);
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if !self.lets_through(event.metadata()) {
            return;
        }
        thread_local! {
            static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
        }
        SCRATCH.with(|scratch| {
            // An event logged while this thread writes a line (a value's `Debug` that
            // logs) finds the scratch taken; it gets one of its own.
            let mut own = Scratch::default();
            let mut borrowed = scratch.try_borrow_mut();
            let scratch = match borrowed.as_deref_mut() {
                Ok(scratch) => scratch,
                Err(_) => &mut own,
            };
            scratch.line.clear();
            self.write_line(scratch, event, &ctx);
            let _ = self.writer.make_writer().write_all(&scratch.line);
            // A rare huge line must not stay allocated for the thread's life.
            if scratch.line.capacity() > 64 * 1024 {
                scratch.line = Vec::new();
            }
            if scratch.own.text.capacity() > 64 * 1024 {
                scratch.own = Fields::default();
            }
        });
    }
}

impl<W> JsonLog<W> {
    fn write_line<S>(&self, scratch: &mut Scratch, event: &Event<'_>, ctx: &Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let Scratch {
            line: out,
            own,
            written,
            path,
        } = scratch;
        let meta = event.metadata();
        own.clear();
        event.record(own);

        out.push(b'{');
        key(out, "timestamp");
        timestamp(out, chrono::Utc::now());
        out.push(b',');
        text_entry(out, "level", meta.level().as_str());
        out.push(b',');
        text_entry(out, "target", meta.target());
        written.clear();
        written.extend(["timestamp", "level", "target"]);
        write_fields(out, written, own);

        if let Some(scope) = ctx.event_scope(event) {
            path.clear();
            // The ids of the span the event happened in (the first of the scope).
            let mut ids = None;
            // Leaf first, so the nearest span's value of a name wins. A span without
            // fields here is one the filter left out: it is not shown at all.
            for span in scope {
                let extensions = span.extensions();
                let Some(fields) = extensions.get::<Fields>() else {
                    continue;
                };
                if path.is_empty() {
                    ids = super::ids::of(&span);
                }
                path.push(span.name());
                write_fields(out, written, fields);
            }
            if !path.is_empty() && !written.contains(&"span") {
                // Outermost first: `request>front.run_query`.
                out.push(b',');
                key(out, "span");
                if path.iter().any(|name| needs_escape(name.as_bytes())) {
                    let names: Vec<&str> = path.iter().rev().copied().collect();
                    string(out, &names.join(">"));
                } else {
                    out.push(b'"');
                    for (i, name) in path.iter().rev().enumerate() {
                        if i > 0 {
                            out.push(b'>');
                        }
                        out.extend_from_slice(name.as_bytes());
                    }
                    out.push(b'"');
                }
            }
            // As OpenTelemetry writes them: lower-case hex, 32 and 16 digits.
            let ids = ids.map(|ids| {
                [
                    ("trace_id", ids.trace, 32),
                    ("span_id", ids.span.into(), 16),
                ]
            });
            for (name, id, digits) in ids.into_iter().flatten() {
                if !written.contains(&name) {
                    out.push(b',');
                    key(out, name);
                    hex(out, id, digits);
                }
            }
        }
        out.extend_from_slice(b"}\n");
    }
}

/// `,"name":value` for each of `fields` whose name is not yet `written`.
fn write_fields(out: &mut Vec<u8>, written: &mut Vec<&'static str>, fields: &Fields) {
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

/// `"name":`, what every value follows.
fn key(out: &mut Vec<u8>, name: &str) {
    string(out, name);
    out.push(b':');
}

/// `"name":"text"`.
fn text_entry(out: &mut Vec<u8>, name: &str, text: &str) {
    key(out, name);
    string(out, text);
}

/// The low `digits` hex digits of `id`, lower case and quoted.
fn hex(out: &mut Vec<u8>, id: u128, digits: usize) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for shift in (0..digits).rev() {
        out.push(DIGITS[(id >> (shift * 4)) as usize & 0xf]);
    }
    out.push(b'"');
}

/// `text` as a JSON string. Names and most values (ids, routes, messages) need no
/// escape, and a line has about twenty of each: they are checked eight bytes at a time
/// and copied whole; anything else is escaped by `serde_json`.
fn string(out: &mut Vec<u8>, text: &str) {
    if needs_escape(text.as_bytes()) {
        let _ = serde_json::to_writer(&mut *out, text);
    } else {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

/// Whether `bytes` holds a control character, `"` or `\\` (what JSON escapes).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Some byte of `x` is zero / below 0x20: the classic word-at-a-time tests, exact
    // for "any byte" (what they may get wrong is which byte, never whether one is).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
        if control || zero(x ^ (ONES * u64::from(b'"'))) || zero(x ^ (ONES * u64::from(b'\\'))) {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// `now` as RFC 3339 in UTC with microseconds (`"2026-11-26T18:47:10.569250Z"`), written
/// digit by digit: chrono's formatter allocated and cost more than the rest of a line.
fn timestamp(out: &mut Vec<u8>, now: chrono::DateTime<chrono::Utc>) {
    use chrono::{Datelike, Timelike};
    let year = now.year();
    // A leap second, or a clock outside four-digit years: chrono knows how.
    if !(0..=9999).contains(&year) || now.nanosecond() >= 1_000_000_000 {
        let text = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        return string(out, &text);
    }
    fn digits(out: &mut Vec<u8>, mut n: u32, width: usize) {
        let mut buffer = [b'0'; 6];
        for slot in buffer[..width].iter_mut().rev() {
            *slot = b'0' + (n % 10) as u8;
            n /= 10;
        }
        out.extend_from_slice(&buffer[..width]);
    }
    out.push(b'"');
    for (n, width, then) in [
        (year as u32, 4, b'-'),
        (now.month(), 2, b'-'),
        (now.day(), 2, b'T'),
        (now.hour(), 2, b':'),
        (now.minute(), 2, b':'),
        (now.second(), 2, b'.'),
    ] {
        digits(out, n, width);
        out.push(then);
    }
    digits(out, now.nanosecond() / 1_000, 6);
    out.extend_from_slice(b"Z\"");
}

#[cfg(test)]
mod tests {
    use super::super::ids::{adopt, Ids, Remote};
    use super::*;
    use std::str::FromStr;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Registry;

    /// Lines written to memory.
    #[derive(Clone, Default)]
    struct Memory(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Memory {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Memory {
        type Writer = Memory;
        fn make_writer(&'a self) -> Memory {
            self.clone()
        }
    }

    fn lines(log: impl FnOnce()) -> Vec<serde_json::Value> {
        logged(|memory| JsonLog::new(memory).boxed(), log)
    }

    /// The lines `log` writes through the layer `make` builds on a memory writer.
    fn logged(
        make: impl FnOnce(Memory) -> Box<dyn Layer<Registry> + Send + Sync>,
        log: impl FnOnce(),
    ) -> Vec<serde_json::Value> {
        let memory = Memory::default();
        let subscriber = tracing_subscriber::registry()
            .with(make(memory.clone()))
            .with(Ids::up_to(tracing::level_filters::LevelFilter::TRACE));
        tracing::subscriber::with_default(subscriber, log);
        let text = String::from_utf8(memory.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    }

    /// Events in spans of every level, some of them filtered out.
    fn mixed_levels() {
        tracing::info!(at = "top", "no span at all");
        tracing::debug_span!("alone").in_scope(|| tracing::warn!("only a hidden span"));
        let outer = tracing::info_span!("request", request_id = "req_1", kept = 1);
        let _outer = outer.enter();
        tracing::debug!("below the filter");
        let hidden = tracing::debug_span!("detail", request_id = "hidden", secret = 2);
        let _hidden = hidden.enter();
        tracing::warn!(code = 50000, "inside a span the filter leaves out");
        hidden.record("secret", 3);
        let inner = tracing::warn_span!("inner", kept = 4);
        inner.in_scope(|| tracing::error!("nested under both"));
    }

    /// A line without what differs from run to run (the time, the random ids), and
    /// whether it had the ids.
    fn steady(mut line: serde_json::Value) -> (serde_json::Value, bool, bool) {
        let object = line.as_object_mut().unwrap();
        object.remove("timestamp");
        let trace = object.remove("trace_id").is_some();
        let span = object.remove("span_id").is_some();
        (line, trace, span)
    }

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

    #[test]
    fn filtering_inside_the_layer_writes_what_a_per_layer_filter_did() {
        let targets = || Targets::from_str("warn,iq_service=info").unwrap();
        let outside = logged(
            |memory| JsonLog::new(memory).with_filter(targets()).boxed(),
            mixed_levels,
        );
        let inside = logged(
            |memory| JsonLog::filtered(memory, targets()).boxed(),
            mixed_levels,
        );
        assert_eq!(inside.len(), 4, "{inside:#?}");
        let inside: Vec<_> = inside.into_iter().map(steady).collect();
        let outside: Vec<_> = outside.into_iter().map(steady).collect();
        assert_eq!(inside, outside);
        // The hidden span's fields are nowhere, nor is it in a path.
        for (line, _, _) in &inside {
            assert_ne!(line["request_id"], "hidden", "{line}");
            assert!(line.get("secret").is_none(), "{line}");
            assert!(!line.to_string().contains("detail"), "{line}");
        }
    }

    #[test]
    fn a_line_has_the_event_and_its_spans_fields_nearest_winning() {
        let lines = lines(|| {
            let outer = tracing::info_span!(
                "request",
                request_id = "req_1",
                otel.kind = "server",
                code = tracing::field::Empty,
                shared = "outer"
            );
            let _outer = outer.enter();
            outer.record("code", 40001);
            let inner = tracing::info_span!("front", shared = "inner", user_id = 7_i64);
            let _inner = inner.enter();
            tracing::warn!(
                latency_ms = 1.5,
                user_id = -1_i64,
                ok = true,
                "said \"hi\"\n"
            );
        });
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["message"], "said \"hi\"\n");
        assert_eq!(line["request_id"], "req_1");
        assert_eq!(line["code"], 40001);
        assert_eq!(line["shared"], "inner", "the nearest span wins");
        assert_eq!(line["user_id"], -1, "the event's own field wins");
        assert_eq!(line["latency_ms"], 1.5);
        assert_eq!(line["ok"], true);
        assert_eq!(line["span"], "request>front");
        assert!(line.get("otel.kind").is_none(), "{line}");
        assert!(line["timestamp"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn a_line_outside_spans_and_odd_values_stay_valid_json() {
        let lines = lines(|| {
            tracing::info!(nan = f64::NAN, big = u64::MAX, text = %"tab\there", "plain");
        });
        let line = &lines[0];
        assert_eq!(line["nan"], serde_json::Value::Null);
        assert_eq!(line["big"], u64::MAX);
        assert_eq!(line["text"], "tab\there");
        assert!(line.get("span").is_none());
    }

    #[test]
    fn a_line_in_a_span_names_its_trace_and_span_in_hex() {
        let lines = lines(|| {
            let span = tracing::info_span!("request");
            let caller = Remote {
                trace: 0xabc,
                span: 0xdef,
                sampled: true,
            };
            adopt(&span, caller);
            span.in_scope(|| tracing::info!("inside"));
        });
        assert_eq!(lines[0]["trace_id"], format!("{:032x}", 0xabc));
        let span_id = lines[0]["span_id"].as_str().unwrap();
        assert_eq!(span_id.len(), 16, "{span_id}");
        assert!(span_id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }

    #[test]
    fn timestamps_are_rfc3339_with_microseconds() {
        use chrono::TimeZone;
        let at = chrono::Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap()
            + chrono::TimeDelta::microseconds(60_789);
        let mut out = Vec::new();
        timestamp(&mut out, at);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"2026-01-02T03:04:05.060789Z\""
        );
    }

    proptest::proptest! {
        /// Names and values are copied unescaped only when JSON needs no escape: the
        /// result is always what `serde_json` writes.
        #[test]
        fn strings_are_written_as_serde_json_writes_them(text in ".*", bytes in proptest::collection::vec(0u8..128, 0..40)) {
            for text in [text, String::from_utf8(bytes).unwrap()] {
                let mut out = Vec::new();
                string(&mut out, &text);
                proptest::prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
            }
        }

        /// Any moment from year 0 to 9999 reads back as itself, to the microsecond.
        #[test]
        fn timestamps_read_back(seconds in -62_167_219_200i64..253_402_300_799, micros in 0u32..1_000_000) {
            let at = chrono::DateTime::from_timestamp(seconds, micros * 1_000).unwrap();
            let mut out = Vec::new();
            timestamp(&mut out, at);
            let text: String = serde_json::from_slice(&out).unwrap();
            proptest::prop_assert_eq!(chrono::DateTime::parse_from_rfc3339(&text).unwrap(), at);
            proptest::prop_assert_eq!(text, at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
        }
    }

    proptest::proptest! {
        /// A caller controls paths, headers and bodies that reach log fields: whatever
        /// the text, the line stays one line of JSON with the text intact.
        #[test]
        fn any_text_stays_one_line_of_json(path in ".*", message in ".*", n in proptest::num::i64::ANY) {
            let lines = lines(|| {
                let span = tracing::info_span!("request", url.path = %path);
                let _in = span.enter();
                tracing::info!(n, "{message}");
            });
            proptest::prop_assert_eq!(lines.len(), 1);
            proptest::prop_assert_eq!(lines[0]["url.path"].as_str(), Some(path.as_str()));
            proptest::prop_assert_eq!(lines[0]["message"].as_str(), Some(message.as_str()));
            proptest::prop_assert_eq!(lines[0]["n"].as_i64(), Some(n));
        }
    }
}
