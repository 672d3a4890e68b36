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
//!
//! Here: the layer and how a line is put together. [`fields`] keeps what spans and
//! events record; [`json`] writes strings, keys, ids and timestamps.

mod fields;
mod json;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::io::Write as _;

use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use fields::{write_fields, Fields};
use json::{hex, key, needs_escape, string, text_entry, timestamp};

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
