//! Logs and traces: one `tracing` subscriber with two outputs.
//!
//! - Log lines on stderr: JSON (one object per line, with the `request_id`, `trace_id`
//!   and `span_id` of the request it belongs to) or a readable format for development.
//!   `RUST_LOG` filters them (default `info`).
//! - OpenTelemetry spans, exported over OTLP/HTTP (protobuf) when
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. The
//!   SDK honours the standard variables: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//!   `OTEL_TRACES_SAMPLER(_ARG)`, `OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_HEADERS`/`_TIMEOUT`;
//!   `OTEL_SDK_DISABLED=true` turns export off. Unless `OTEL_BSP_*` say otherwise, the
//!   batch processor queues up to 32,768 spans and sends 4,096 a request (the SDK's
//!   2,048 and 512 dropped spans under load). Without export, spans still get trace
//!   and span ids (from [`ids`], without the OpenTelemetry layer's cost), so log lines
//!   can be correlated all the same, and a caller's `traceparent` is continued.
//!
//! Nothing here may log a secret: the database driver, which logs statement parameters
//! at debug level, is capped at `info` in both outputs.

mod ids;
mod json_log;
pub mod propagation;

use std::sync::{Arc, OnceLock};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::{
    BatchConfig, BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider,
};
use opentelemetry_sdk::Resource;
use tracing::Dispatch;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::http::request_context::ACCESS_TARGET;
use crate::settings::LogFormat;
use json_log::JsonLog;

/// The database driver logs every statement's parameters at debug level: password
/// hashes, key HMACs, session digests. Those must never reach a log, whatever
/// `RUST_LOG` asks for, so the driver is capped at `info`.
const DRIVER_CAP: &str = "tokio_postgres=info";

/// The service's name in traces when `OTEL_SERVICE_NAME` does not say otherwise.
const SERVICE_NAME: &str = "iq-service";

/// What [`init`] set up; [`Telemetry::shutdown`] flushes the spans and log lines still
/// queued.
pub struct Telemetry {
    provider: SdkTracerProvider,
    exporting: bool,
    /// The log writer's thread: log lines are written off the request path, and
    /// dropping this writes out what is still queued.
    logs: tracing_appender::non_blocking::WorkerGuard,
}

impl Telemetry {
    /// Exports every span still queued and stops the exporter's thread, then writes out
    /// the queued log lines. Blocking: call it last, after the server has stopped.
    pub fn shutdown(self) {
        if self.exporting {
            match self.provider.shutdown() {
                Ok(()) => tracing::info!("traces flushed"),
                Err(err) => tracing::error!(error = %err, "traces could not all be exported"),
            }
        }
        drop(self.logs);
    }
}

/// Installs the global subscriber, logging at `default_level` unless `RUST_LOG` says
/// otherwise: `info` for the service, `warn` for commands, whose own output is the
/// progress. Traces are always recorded at `info`, whatever the log level.
pub fn init(format: LogFormat, default_level: &str) -> Telemetry {
    let (provider, exporting, problem) = tracer_provider();
    let tracer = provider.tracer(SERVICE_NAME);

    let log_filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(default_level))
        .add_directive(DRIVER_CAP.parse().expect("a valid directive"));
    // The exporter's own crates log through `tracing` too; their events must not become
    // spans of the trace they are exporting. The access line is left out too: its span
    // already has what it says.
    let trace_filter = Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target(ACCESS_TARGET, tracing::level_filters::LevelFilter::OFF)
        .with_target("opentelemetry", tracing::level_filters::LevelFilter::OFF)
        .with_target(
            "opentelemetry_sdk",
            tracing::level_filters::LevelFilter::OFF,
        )
        .with_target(
            "opentelemetry_otlp",
            tracing::level_filters::LevelFilter::OFF,
        )
        .with_target(
            "opentelemetry_http",
            tracing::level_filters::LevelFilter::OFF,
        )
        .with_target("reqwest", tracing::level_filters::LevelFilter::OFF)
        .with_target("hyper", tracing::level_filters::LevelFilter::OFF)
        .with_target("hyper_util", tracing::level_filters::LevelFilter::OFF);
    // Per span only what an SRE reads: no source locations, thread names or busy/idle
    // timing, which would cost a clock read on every poll and double the export size,
    // and no `target` (the Rust module the span was opened in; its name says more): a
    // string attribute on every span, a fifth of what a request exported.
    let traces = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_target(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_error_records_to_exceptions(false)
        // Nothing else in the process reads OpenTelemetry's current context (spans find
        // their parents through `tracing`), and activating it on every poll of every
        // instrumented future is a clone and a thread-local push each time.
        .with_context_activation(false)
        .with_filter(trace_filter);

    // Lines go to a queue a thread of their own writes to stderr: a request never waits
    // on the terminal or the log collector's pipe. Not lossy: when the queue is full,
    // logging waits rather than dropping lines an SRE may need.
    let (writer, logs_guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("iq-log-writer")
        .finish(std::io::stderr());
    let dispatch_cell = Arc::new(OnceLock::new());
    let logs = match format {
        LogFormat::Json => JsonLog::new(writer, dispatch_cell.clone())
            .with_filter(log_filter)
            .boxed(),
        LogFormat::Pretty => tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_filter(log_filter)
            .boxed(),
    };
    // Spans are built for OpenTelemetry only when they are exported; otherwise a layer
    // of our own gives them the ids log lines carry, at a fraction of the cost.
    let (traces, ids) = match exporting {
        true => (Some(traces), None),
        false => (None, Some(ids::Ids)),
    };
    let dispatch = Dispatch::new(Registry::default().with(traces).with(ids).with(logs));
    // The log format reads each line's trace ids through the dispatcher; it may not
    // call the global one while an event is being dispatched.
    let _ = dispatch_cell.set(dispatch.downgrade());
    if let Err(err) = tracing::dispatcher::set_global_default(dispatch) {
        eprintln!("logging was already initialised: {err}");
    }
    if let Some(problem) = problem {
        tracing::error!(%problem, "trace export is off");
    } else if exporting {
        tracing::info!("exporting traces over OTLP/HTTP");
    }
    Telemetry {
        provider,
        exporting,
        logs: logs_guard,
    }
}

/// The provider: with a batch exporter when an endpoint is configured (and the SDK is
/// not disabled), otherwise without one. Also answers why export is off when it was
/// asked for but could not be set up.
fn tracer_provider() -> (SdkTracerProvider, bool, Option<String>) {
    let mut resource = Resource::builder();
    if var("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(SERVICE_NAME);
    }
    let builder = SdkTracerProvider::builder().with_resource(resource.build());
    let wanted = var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some();
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !wanted || disabled {
        return (unrecorded(builder), false, None);
    }
    let protocol =
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let mut problem = None;
    if let Some(protocol) = protocol.filter(|p| p != "http/protobuf") {
        problem = Some(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL {protocol:?} is not supported; using http/protobuf"
        ));
    }
    // The endpoint and headers come from the standard variables.
    match SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .build()
    {
        // The batch processor exports from its own thread, so a slow collector never
        // holds up a request; spans it cannot queue are counted and reported.
        Ok(exporter) => {
            if let Some(problem) = problem {
                eprintln!("{problem}");
            }
            let processor = BatchSpanProcessor::builder(exporter)
                .with_batch_config(batch_config())
                .build();
            (builder.with_span_processor(processor).build(), true, None)
        }
        Err(err) => (
            unrecorded(builder),
            false,
            Some(format!("the OTLP exporter could not be built: {err}")),
        ),
    }
}

/// Spans the batch processor holds before it drops new ones, and sends per request,
/// when `OTEL_BSP_MAX_QUEUE_SIZE` and `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` do not say. The
/// SDK's defaults (2,048 and 512) dropped about 4% of the spans of a saturated cached
/// query (five spans a request, 20,000 requests a second on two cores): the exporter's
/// thread, sharing the cores, falls behind in bursts. A trace an SRE looks for must be
/// there; this queue holds about 0.3 s of that load (its memory when full is not
/// measured: at a few hundred bytes a span, on the order of ten MB).
const QUEUE_SPANS: usize = 32_768;
const BATCH_SPANS: usize = 4_096;

fn batch_config() -> BatchConfig {
    let mut config = BatchConfigBuilder::default();
    if var("OTEL_BSP_MAX_QUEUE_SIZE").is_none() {
        config = config.with_max_queue_size(QUEUE_SPANS);
    }
    if var("OTEL_BSP_MAX_EXPORT_BATCH_SIZE").is_none() {
        config = config.with_max_export_batch_size(BATCH_SPANS);
    }
    config.build()
}

/// An OpenTelemetry variable, when set to something other than blanks.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A provider for when nothing exports. No span reaches it (the OpenTelemetry layer is
/// not installed then; [`ids`] gives spans their ids); should one ever, it is sampled
/// out rather than recorded only to be thrown away.
fn unrecorded(builder: opentelemetry_sdk::trace::TracerProviderBuilder) -> SdkTracerProvider {
    builder
        .with_sampler(opentelemetry_sdk::trace::Sampler::AlwaysOff)
        .build()
}
