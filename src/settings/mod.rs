//! The service's settings, each declared once (decisions D10): a field of one of the
//! parts below, with its environment variable, its command-line flag, its default, its
//! bounds and its help, all in clap's derive. `iq-service --help` prints them,
//! docs/operations.md's table is rendered from them ([`reference`]), the deploy test
//! reads their variables from them, and tests build settings from the same declaration
//! ([`Settings::defaults`]).
//!
//! A blank variable counts as unset. A bad value stops the start with a message that
//! names the setting; a secret's value is never printed (not in errors, not in
//! `Debug`). Nothing here may read the environment outside clap's parse.

mod accounts;
mod database;
mod http;
mod imports;
mod quota;
pub mod reference;
mod site;
mod telemetry;
mod values;
mod webhooks;

use std::sync::Arc;

use clap::{Args, FromArgMatches};
use iq_actors::clock::{Clock, SystemClock};

pub use accounts::AccountsConfig;
pub use database::{Database, DatabaseConfig};
pub use http::HttpConfig;
pub use imports::ImportsConfig;
pub use quota::QuotaConfig;
pub use site::SiteSettings;
pub use telemetry::{TelemetryConfig, OTEL_VARIABLES};
pub use values::{KeySecret, Millis, Seconds, Secret};
pub use webhooks::WebhooksConfig;

/// Every setting, by part. The part's heading is the one `--help` shows.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    #[command(flatten, next_help_heading = "HTTP")]
    pub http: HttpConfig,
    #[command(flatten, next_help_heading = "Database")]
    pub database: DatabaseConfig,
    #[command(flatten, next_help_heading = "Accounts")]
    pub accounts: AccountsConfig,
    #[command(flatten, next_help_heading = "Quota")]
    pub quota: QuotaConfig,
    #[command(flatten, next_help_heading = "Imports")]
    pub imports: ImportsConfig,
    #[command(flatten, next_help_heading = "Website and API")]
    pub site: SiteSettings,
    #[command(flatten, next_help_heading = "Telemetry")]
    pub telemetry: TelemetryConfig,
    #[command(flatten, next_help_heading = "Webhooks")]
    pub webhooks: WebhooksConfig,
    /// Not settings: what tests and benchmarks replace.
    #[arg(skip)]
    pub runtime: Runtime,
}

/// What the process supplies rather than the operator: the clock, and step 7 on or
/// off. No variable reaches these; a deployment always runs the real clock with the
/// quota enforced.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub clock: Arc<dyn Clock>,
    /// Off only in the key path benchmark, to measure what the quota costs.
    pub quota_enforced: bool,
}

impl Default for Runtime {
    fn default() -> Self {
        Runtime {
            clock: Arc::new(SystemClock),
            quota_enforced: true,
        }
    }
}

impl Settings {
    /// Every setting at its declared default, whatever the environment holds: the
    /// start tests build their settings from.
    pub fn defaults() -> Settings {
        let command = Settings::augment_args(clap::Command::new("defaults"))
            .mut_args(|arg| arg.env(None::<&str>));
        let matches = command
            .try_get_matches_from(["defaults"])
            .expect("every setting has a default or is optional");
        Settings::from_arg_matches(&matches).expect("the defaults parse")
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.runtime.clock
    }
}

#[cfg(test)]
mod tests;
