//! Log set-up: JSON lines in production, a readable format for development. Each line
//! carries the spans it was written in, so every line of a request has its `request_id`.

use tracing_subscriber::EnvFilter;

use crate::settings::LogFormat;

/// The database driver logs every statement's parameters at debug level: password
/// hashes, key HMACs, session digests. Those must never reach a log, whatever
/// `RUST_LOG` asks for, so the driver is capped at `info`.
const DRIVER_CAP: &str = "tokio_postgres=info";

/// Installs the global subscriber; `RUST_LOG` filters (default `info`).
/// Logging at `default_level` unless `RUST_LOG` says otherwise: `info` for the
/// service, `warn` for commands, whose own output is the progress.
pub fn init(format: LogFormat, default_level: &str) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(default_level))
        .add_directive(DRIVER_CAP.parse().expect("a valid directive"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Json => builder
            .json()
            .with_current_span(false)
            .with_span_list(true)
            .flatten_event(true)
            .try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
    if let Err(err) = result {
        eprintln!("logging was already initialised: {err}");
    }
}
