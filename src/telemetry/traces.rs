//! Trace export: `tracing` spans become OpenTelemetry spans (`tracing-opentelemetry`),
//! which the SDK's batch processor sends over OTLP/HTTP in protobuf
//! (`opentelemetry-otlp`) from a thread of its own, so a slow or absent collector never
//! holds up a request; spans it cannot queue are dropped and counted.
//!
//! On when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set,
//! unless `OTEL_SDK_DISABLED=true`. The SDK and the exporter read the standard variables
//! themselves (the sampler, the resource, the batch processor, headers, compression);
//! this module adds what they leave to the application: the HTTP client, with its
//! timeout, no redirects, and the collector's CA from `OTEL_EXPORTER_OTLP_CERTIFICATE`.
//!
//! It must never export the exporter's own events (they would become spans of the
//! traces being exported) nor the access line, whose span already says what it says.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::{
    BatchConfig, BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider,
};
use opentelemetry_sdk::Resource;
use tracing::Subscriber;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::{var, ACCESS_TARGET, SERVICE_NAME};

/// The provider whose spans are exported, when export is configured; `Err` says why it
/// was asked for and could not be set up.
pub fn provider() -> Result<Option<SdkTracerProvider>, String> {
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if var("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
        && var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
    {
        return Ok(None);
    }
    let protocol =
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(protocol) = protocol.filter(|p| p != "http/protobuf") {
        return Err(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL {protocol:?} is not supported: only http/protobuf"
        ));
    }
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_http_client(http_client()?)
        .build()
        .map_err(|err| err.to_string())?;
    let processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(batch_config())
        .build();
    let mut resource = Resource::builder();
    if var("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(SERVICE_NAME);
    }
    // The sampler is the SDK's default, which reads `OTEL_TRACES_SAMPLER(_ARG)`.
    Ok(Some(
        SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource.build())
            .build(),
    ))
}

/// The layer that turns spans at `info` and above into OpenTelemetry spans, leaving out
/// the exporter's own crates and the access line. A span it leaves out is skipped: its
/// children hang from the nearest span it keeps.
pub fn layer<S>(provider: &SdkTracerProvider) -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let kept = Targets::new()
        .with_default(tracing::Level::INFO)
        .with_targets(
            [ACCESS_TARGET, "opentelemetry", "reqwest", "hyper", "rustls"]
                .map(|target| (target, tracing::level_filters::LevelFilter::OFF)),
        );
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(SERVICE_NAME))
        // Span names say what a span is; the Rust module, file, line and thread would
        // only add bytes to every exported span (docs/performance.md).
        .with_target(false)
        .with_location(false)
        .with_threads(false)
        // Busy and idle time read the clock at every poll of every instrumented future;
        // the span's own start and end say how long it took.
        .with_tracked_inactivity(false)
        // Nothing here reads OpenTelemetry's current context, so entering a span need not
        // set it.
        .with_context_activation(false)
        .with_filter(kept)
}

/// The client the exporter posts with: built on a thread of its own, since a blocking
/// client cannot be made inside the async runtime `main` runs in.
fn http_client() -> Result<reqwest::blocking::Client, String> {
    // rustls' crypto; installing it twice (a second `init` in tests) is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let timeout = timeout()?;
    let certificates = certificates()?;
    std::thread::spawn(move || {
        reqwest::blocking::Client::builder()
            .timeout(timeout)
            // A collector that redirects is misconfigured; following it would send
            // spans where nobody configured them to go.
            .redirect(reqwest::redirect::Policy::none())
            .tls_certs_merge(certificates)
            .build()
    })
    .join()
    .map_err(|_| "the HTTP client could not be built".to_string())?
    .map_err(|err| format!("the HTTP client could not be built: {err}"))
}

/// `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT`, in milliseconds; the specification's 10 s when
/// unset.
fn timeout() -> Result<Duration, String> {
    let Some(value) =
        var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT").or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT"))
    else {
        return Ok(Duration::from_secs(10));
    };
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .ok_or_else(|| {
            format!("OTEL_EXPORTER_OTLP_TIMEOUT {value:?} is not a number of milliseconds")
        })
}

/// The collector's CA certificates (PEM) from `OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE`,
/// trusted besides the system's.
fn certificates() -> Result<Vec<reqwest::Certificate>, String> {
    let Some(path) = var("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE")
        .or_else(|| var("OTEL_EXPORTER_OTLP_CERTIFICATE"))
    else {
        return Ok(Vec::new());
    };
    let pem = std::fs::read(&path)
        .map_err(|err| format!("OTEL_EXPORTER_OTLP_CERTIFICATE {path:?}: {err}"))?;
    reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|err| format!("OTEL_EXPORTER_OTLP_CERTIFICATE {path:?}: {err}"))
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
