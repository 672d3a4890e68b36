//! Logs and traces: one `tracing` subscriber with two outputs.
//!
//! - Log lines on stderr: JSON (one object per line, with the `request_id`, `trace_id`
//!   and `span_id` of the request it belongs to) or a readable format for development.
//!   `RUST_LOG` filters them (default `info`). A thread of their own writes them,
//!   many lines a write ([`log_writer`]).
//! - OpenTelemetry spans, exported over OTLP/HTTP (protobuf; TLS for an `https`
//!   endpoint) when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set:
//!   [`export`] builds them from `tracing`'s spans, sampled by the standard sampler
//!   (`OTEL_TRACES_SAMPLER(_ARG)`), and the SDK's batch processor sends them with
//!   `opentelemetry-otlp` ([`traces`]), both honouring the standard variables;
//!   `OTEL_SDK_DISABLED=true` turns export off. Every span has trace and span ids
//!   ([`ids`]), exported or not, so log lines can be correlated all the same, and a
//!   caller's `traceparent` is continued ([`propagation`]).
//!
//! Nothing here may log a secret: the database driver, which logs statement parameters
//! at debug level, is capped at `info` in both outputs.

mod export;
mod ids;
mod json_log;
mod log_filter;
mod log_writer;
pub mod propagation;
mod traces;

use std::sync::Arc;

use opentelemetry_sdk::trace::{BatchSpanProcessor, Config, SpanProcessor};
use tracing::level_filters::LevelFilter;
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

use json_log::JsonLog;
use log_filter::LogFilter;

/// The target of the access line, `"request completed"`, which the HTTP edge writes.
pub const ACCESS_TARGET: &str = "iq_service::access";

/// How log lines are written (`LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Json,
    Pretty,
}

/// The service's name in traces when `OTEL_SERVICE_NAME` does not say otherwise.
const SERVICE_NAME: &str = "iq-service";

/// What [`init`] set up; [`Telemetry::shutdown`] flushes the spans and log lines still
/// queued.
pub struct Telemetry {
    /// The batch processor, when spans are exported.
    spans: Option<Arc<BatchSpanProcessor>>,
    /// The log writer's thread: log lines are written off the request path, and
    /// dropping this writes out what is still queued.
    logs: log_writer::LogGuard,
}

impl Telemetry {
    /// Exports every span still queued and stops the exporter's thread, then writes out
    /// the queued log lines. Blocking: call it last, after the server has stopped.
    pub fn shutdown(self) {
        if let Some(spans) = self.spans {
            match spans.shutdown() {
                Ok(()) => tracing::info!("traces flushed"),
                Err(err) => tracing::error!(error = %err, "traces could not all be exported"),
            }
        }
        drop(self.logs);
    }
}

/// Installs the global subscriber, logging by `filter` (`RUST_LOG`), else at
/// `default_level`: `info` for the service, `warn` for commands, whose own output is the
/// progress. Traces are always recorded at `info`, whatever the log level.
pub fn init(format: LogFormat, filter: Option<&str>, default_level: &str) -> Telemetry {
    let (spans, problem) = match traces::processor() {
        Ok(processor) => (processor.map(Arc::new), None),
        Err(problem) => (None, Some(problem)),
    };

    let log_filter = LogFilter::new(filter, default_level);
    // Spans get ids up to the most verbose level anything records: traces are `info`.
    let ids = ids::Ids::up_to(log_filter.most_verbose().max(LevelFilter::INFO));
    // The exporter's own crates log through `tracing` too; their events must not become
    // parts of the trace they are exporting. The access line is left out too: its span
    // already has what it says. Spans are exported at `info` and above, whatever the
    // log level.
    let traces = spans.clone().map(|processor| {
        let processor: Arc<dyn SpanProcessor> = processor;
        let sampler = Config::default().sampler;
        export::Export::new(
            processor,
            sampler,
            SERVICE_NAME,
            &[ACCESS_TARGET, "opentelemetry", "reqwest", "hyper", "rustls"],
        )
    });

    // Lines collect in a buffer a thread of their own writes to stderr, many a write: a
    // request never waits on the terminal or the log collector's pipe, nor wakes a
    // thread for each line (see `log_writer`). Not lossy.
    let (writer, logs_guard) = log_writer::start(std::io::stderr(), "iq-log-writer");
    let logs = match (format, log_filter) {
        // The common case filters inside the layer: a per-layer filter costs a span
        // look-up on every enter, exit, record and close (see `json_log`).
        (LogFormat::Json, LogFilter::Targets(targets)) => {
            JsonLog::filtered(writer, targets).boxed()
        }
        (LogFormat::Json, log_filter) => JsonLog::new(writer).with_filter(log_filter).boxed(),
        (LogFormat::Pretty, log_filter) => tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_filter(log_filter)
            .boxed(),
    };
    // Ids first: the export layer reads them.
    let dispatch = Dispatch::new(Registry::default().with(ids).with(traces).with(logs));
    if let Err(err) = tracing::dispatcher::set_global_default(dispatch) {
        eprintln!("logging was already initialised: {err}");
    }
    if let Some(problem) = problem {
        tracing::error!(%problem, "trace export is off");
    } else if spans.is_some() {
        tracing::info!("exporting traces over OTLP/HTTP");
    }
    Telemetry {
        spans,
        logs: logs_guard,
    }
}

/// An OpenTelemetry variable, when set to something other than blanks.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
