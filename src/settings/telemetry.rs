//! Settings of what the service says about itself: log lines and the access log. The
//! OpenTelemetry variables are the SDK's own, read as its specification defines them;
//! [`OTEL_VARIABLES`] lists the ones the service documents, for `--help` and the docs.

use clap::Args;

use crate::http::access_log::AccessLog;
use crate::telemetry::LogFormat;

#[derive(Debug, Clone, Args)]
pub struct TelemetryConfig {
    /// Log line format; unset: pretty on a terminal, JSON otherwise.
    #[arg(long, env, value_enum)]
    pub log_format: Option<LogFormat>,

    /// Which requests get an access-log line at info: all, errors (status 400 and
    /// above), sample:N (every N-th success, every error) or off; the others are logged
    /// at debug, and a request's warnings and errors always carry its request_id.
    #[arg(long, env, default_value_t = AccessLog::default())]
    pub access_log: AccessLog,

    /// Log filter in tracing's EnvFilter syntax; unset: info for the service, warn for
    /// commands. The database driver stays at info or quieter: its debug lines would
    /// show statement parameters.
    #[arg(long, env)]
    pub rust_log: Option<String>,
}

impl TelemetryConfig {
    /// The format asked for, or the one that suits where standard error goes.
    pub fn log_format(&self) -> LogFormat {
        self.log_format.unwrap_or_else(|| {
            if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                LogFormat::Pretty
            } else {
                LogFormat::Json
            }
        })
    }
}

/// The OpenTelemetry SDK's variables the service honours: name, default, what they do
/// here.
pub const OTEL_VARIABLES: &[(&str, &str, &str)] = &[
    (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "unset: no export",
        "OTLP/HTTP (protobuf) collector, http or https, e.g. https://collector:4318; \
         /v1/traces is appended",
    ),
    (
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "unset",
        "the traces endpoint itself, used as is",
    ),
    (
        "OTEL_SERVICE_NAME",
        "iq-service",
        "service name of the traces",
    ),
    (
        "OTEL_TRACES_SAMPLER",
        "parentbased_always_on",
        "the standard samplers; in production parentbased_traceidratio (deploy/kubernetes)",
    ),
    (
        "OTEL_TRACES_SAMPLER_ARG",
        "unset",
        "the sampler's argument: 0.1 in production (one trace in ten)",
    ),
    (
        "OTEL_EXPORTER_OTLP_HEADERS",
        "unset",
        "headers sent with every export, e.g. a back end's API key (key=value,..., \
         percent-decoded; also OTEL_EXPORTER_OTLP_TRACES_HEADERS)",
    ),
    (
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "10000",
        "export timeout in milliseconds (also OTEL_EXPORTER_OTLP_TRACES_TIMEOUT)",
    ),
    (
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "http/protobuf",
        "the only protocol; another turns export off with an error at start (also \
         OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)",
    ),
    (
        "OTEL_EXPORTER_OTLP_COMPRESSION",
        "unset: none",
        "gzip compresses every export (also OTEL_EXPORTER_OTLP_TRACES_COMPRESSION)",
    ),
    (
        "OTEL_EXPORTER_OTLP_CERTIFICATE",
        "unset: the system's CAs",
        "a PEM file of CA certificates to trust besides the system's, for a collector \
         with a private CA (also OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE); unreadable: \
         export off with an error at start",
    ),
    (
        "OTEL_BSP_MAX_QUEUE_SIZE",
        "32768",
        "spans queued for export before new ones are dropped",
    ),
    (
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
        "4096",
        "spans sent per export",
    ),
    (
        "OTEL_BSP_SCHEDULE_DELAY",
        "5000",
        "milliseconds between exports",
    ),
    (
        "OTEL_BSP_EXPORT_TIMEOUT",
        "30000",
        "milliseconds one export may take",
    ),
    (
        "OTEL_RESOURCE_ATTRIBUTES",
        "unset",
        "resource attributes of the traces (key=value,...)",
    ),
    ("OTEL_SDK_DISABLED", "false", "true: no trace export at all"),
];
