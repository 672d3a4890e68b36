//! Settings of step 7, the per-key quota: how often usage is written, how long a lease
//! proves an instance alive, and how long usage is kept.

use clap::Args;
use iq_actors::quota::QuotaSettings;

use super::values::{millis, Millis};

#[derive(Debug, Clone, Args)]
pub struct QuotaConfig {
    /// How often each instance writes key usage and the call log, in milliseconds
    /// (10-60000).
    #[arg(long, env, value_parser = millis(10..=60_000),
          default_value_t = QuotaSettings::default().flush_interval.into())]
    pub quota_flush_ms: Millis,

    /// How long one statement proves an instance alive: the day budget leased by an
    /// instance that stops renewing is given back this long after its last statement
    /// (1000-600000; see "Quotas through crashes").
    #[arg(long, env, value_parser = millis(1_000..=600_000),
          default_value_t = QuotaSettings::default().lease_ttl.into())]
    pub quota_lease_ttl_ms: Millis,

    /// Daily usage older than this many days is deleted; the call log is dropped a UTC
    /// month at a time once the whole month is older. At least 1 (today's usage lives
    /// there).
    #[arg(long, env, value_parser = clap::value_parser!(u32).range(1..),
          default_value_t = QuotaSettings::default().retention_days)]
    pub call_log_retention_days: u32,
}

impl QuotaConfig {
    pub fn settings(&self) -> QuotaSettings {
        QuotaSettings {
            flush_interval: self.quota_flush_ms.0,
            lease_ttl: self.quota_lease_ttl_ms.0,
            retention_days: self.call_log_retention_days,
            ..QuotaSettings::default()
        }
    }
}
