//! The PostgreSQL connection pool every actor shares.
//!
//! Every statement runs under a server-side `statement_timeout` and every pool wait is
//! bounded, so a database outage answers 50000 quickly instead of hanging a request.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

#[derive(Debug, Clone)]
pub struct PoolSettings {
    pub max_size: usize,
    /// Longest a request waits for a connection or for a connection to be made.
    pub acquire_timeout: Duration,
    pub statement_timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            max_size: 16,
            acquire_timeout: Duration::from_secs(3),
            statement_timeout: Duration::from_secs(10),
        }
    }
}

/// Builds the pool. Connections are made lazily, so this does not touch the database.
pub fn build_pool(
    mut config: tokio_postgres::Config,
    settings: &PoolSettings,
) -> Result<Pool, String> {
    let timeout_ms = settings.statement_timeout.as_millis();
    config.options(format!("-c statement_timeout={timeout_ms}"));
    config.connect_timeout(settings.acquire_timeout);
    config.application_name("iq-service");
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(settings.max_size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(settings.acquire_timeout))
        .create_timeout(Some(settings.acquire_timeout))
        .recycle_timeout(Some(settings.acquire_timeout))
        .build()
        .map_err(|e| e.to_string())
}
