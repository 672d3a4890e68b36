//! What `RUST_LOG` lets through to the log lines.
//!
//! `RUST_LOG` is read as `tracing-subscriber`'s `EnvFilter` syntax. When it names only
//! targets and levels (`info`, `iq_service=debug,tokio_postgres=warn`: all anyone sets
//! in practice) it becomes a `Targets` filter, which decides once per call site. Only
//! span or field directives (`[request]=debug`) need `EnvFilter`, which also looks every
//! span up in a locked map on each enter, exit, record and close: about a tenth of a
//! cached request's CPU when it was used for everything.
//!
//! It must never let the database driver's debug lines through: they carry statement
//! parameters (password hashes, key HMACs), so the driver is capped at `info` whatever
//! `RUST_LOG` says.

use std::str::FromStr;

use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Level, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// The target whose lines are capped at `info`, and why: see the module docs.
const DRIVER: &str = "tokio_postgres";

/// The log lines' filter.
// One per process, made once: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum LogFilter {
    /// Targets and levels only.
    Targets(Targets),
    /// Span or field directives.
    Env(EnvFilter),
}

impl LogFilter {
    /// `directives` (the value of `RUST_LOG`) when it is set, not blank and valid;
    /// otherwise `default_level`. The driver is capped at `info` in both cases.
    pub fn new(directives: Option<&str>, default_level: &str) -> Self {
        let directives = directives.map(str::trim).filter(|d| !d.is_empty());
        let driver_cap = || format!("{DRIVER}=info");
        if let Some(directives) = directives {
            // `Targets` would take `[span]` for a target name: spans and fields, which
            // are always in brackets, are left to `EnvFilter`.
            let static_only = !directives.contains('[');
            if let Some(targets) = static_only
                .then(|| Targets::from_str(directives).ok())
                .flatten()
            {
                return LogFilter::Targets(targets.with_target(DRIVER, Level::INFO));
            }
            if let Ok(env) = EnvFilter::try_new(directives) {
                let cap = driver_cap().parse().expect("a valid directive");
                return LogFilter::Env(env.add_directive(cap));
            }
        }
        let targets = Targets::from_str(default_level)
            .unwrap_or_else(|_| Targets::new().with_default(LevelFilter::INFO));
        LogFilter::Targets(targets.with_target(DRIVER, Level::INFO))
    }

    /// The most verbose level it lets through anywhere.
    pub fn most_verbose(&self) -> LevelFilter {
        let hint = match self {
            LogFilter::Targets(targets) => {
                <Targets as Filter<tracing_subscriber::Registry>>::max_level_hint(targets)
            }
            LogFilter::Env(env) => env.max_level_hint(),
        };
        hint.unwrap_or(LevelFilter::TRACE)
    }
}

impl<S> Filter<S> for LogFilter
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn enabled(&self, meta: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        match self {
            LogFilter::Targets(f) => Filter::<S>::enabled(f, meta, cx),
            LogFilter::Env(f) => Filter::<S>::enabled(f, meta, cx),
        }
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        match self {
            LogFilter::Targets(f) => Filter::<S>::callsite_enabled(f, meta),
            LogFilter::Env(f) => Filter::<S>::callsite_enabled(f, meta),
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.most_verbose())
    }

    // `Targets` keeps nothing per span; only `EnvFilter` needs to see them.
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, cx: Context<'_, S>) {
        if let LogFilter::Env(f) = self {
            Filter::<S>::on_new_span(f, attrs, id, cx)
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, cx: Context<'_, S>) {
        if let LogFilter::Env(f) = self {
            Filter::<S>::on_record(f, id, values, cx)
        }
    }

    fn on_enter(&self, id: &Id, cx: Context<'_, S>) {
        if let LogFilter::Env(f) = self {
            Filter::<S>::on_enter(f, id, cx)
        }
    }

    fn on_exit(&self, id: &Id, cx: Context<'_, S>) {
        if let LogFilter::Env(f) = self {
            Filter::<S>::on_exit(f, id, cx)
        }
    }

    fn on_close(&self, id: Id, cx: Context<'_, S>) {
        if let LogFilter::Env(f) = self {
            Filter::<S>::on_close(f, id, cx)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(filter: &LogFilter) -> &Targets {
        match filter {
            LogFilter::Targets(targets) => targets,
            LogFilter::Env(_) => panic!("expected a Targets filter"),
        }
    }

    #[test]
    fn targets_and_levels_need_no_env_filter() {
        let filter = LogFilter::new(Some("warn,iq_service=debug"), "info");
        let t = targets(&filter);
        assert!(t.would_enable("iq_service::http", &Level::DEBUG));
        assert!(!t.would_enable("actix_http::h1", &Level::INFO));
        assert_eq!(filter.most_verbose(), LevelFilter::DEBUG);
    }

    #[test]
    fn span_directives_keep_env_filter() {
        let filter = LogFilter::new(Some("info,[request]=debug"), "info");
        assert!(matches!(filter, LogFilter::Env(_)));
        assert_eq!(filter.most_verbose(), LevelFilter::DEBUG);
    }

    #[test]
    fn blank_or_invalid_directives_fall_back_to_the_default() {
        for directives in [None, Some(""), Some("  "), Some("info,=nonsense=")] {
            let filter = LogFilter::new(directives, "warn");
            let t = targets(&filter);
            assert!(t.would_enable("iq_service", &Level::WARN), "{directives:?}");
            assert!(
                !t.would_enable("iq_service", &Level::INFO),
                "{directives:?}"
            );
        }
    }

    #[test]
    fn the_driver_is_capped_at_info_whatever_is_asked() {
        for directives in [
            "trace",
            "tokio_postgres=trace",
            "debug,tokio_postgres=debug",
        ] {
            let filter = LogFilter::new(Some(directives), "info");
            let t = targets(&filter);
            assert!(
                !t.would_enable("tokio_postgres::query", &Level::DEBUG),
                "{directives}"
            );
            assert!(t.would_enable("tokio_postgres::connection", &Level::INFO));
        }
        let env = LogFilter::new(Some("trace,[request]=trace"), "info");
        let LogFilter::Env(env) = env else {
            panic!("expected EnvFilter")
        };
        assert!(env.to_string().contains("tokio_postgres=info"));
    }
}
