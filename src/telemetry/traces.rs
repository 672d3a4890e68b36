//! Trace export: the OpenTelemetry SDK's batch processor, which sends the spans
//! [`super::export`] builds over OTLP/HTTP in protobuf (`opentelemetry-otlp`) from a
//! thread of its own, so a slow or absent collector never holds up a request; spans it
//! cannot queue are dropped and counted.
//!
//! On when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set,
//! unless `OTEL_SDK_DISABLED=true`. The SDK and the exporter read the standard variables
//! themselves (the resource, the batch processor, headers, compression, the endpoint);
//! this module adds what they leave to the application: the HTTP client, with its
//! timeout, no redirects, TLS through rustls, and the collector's CA from
//! `OTEL_EXPORTER_OTLP_CERTIFICATE`.
//!
//! It must never block a request: everything here runs at start-up or on the SDK's
//! thread.

use std::time::Duration;

use opentelemetry_otlp::{SpanExporter, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::{
    BatchConfig, BatchConfigBuilder, BatchSpanProcessor, SpanProcessor as _,
};
use opentelemetry_sdk::Resource;

use super::{var, SERVICE_NAME};

/// The batch processor that exports spans, when export is configured; `Err` says why it
/// was asked for and could not be set up.
pub fn processor() -> Result<Option<BatchSpanProcessor>, String> {
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
    let mut processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(batch_config())
        .build();
    let mut resource = Resource::builder();
    if var("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(SERVICE_NAME);
    }
    processor.set_resource(&resource.build());
    Ok(Some(processor))
}

/// The client the exporter posts with: built on a thread of its own, since a blocking
/// client cannot be made inside the async runtime `main` runs in.
fn http_client() -> Result<reqwest::blocking::Client, String> {
    crate::tls::install_crypto();
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
