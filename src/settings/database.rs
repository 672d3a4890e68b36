//! Settings of the database: which PostgreSQL (an external one or the embedded
//! cluster), the connection pool, and whether an empty database gets demo data.

use std::path::PathBuf;

use clap::Args;
use iq_actors::db::PoolSettings;

use super::values::{millis, Millis, Secret};

/// Where the data lives. `Debug` hides the URL, which usually holds a password.
#[derive(Clone)]
pub enum Database {
    /// An external PostgreSQL (`DATABASE_URL`).
    Url(String),
    /// A cluster the service runs itself from the machine's PostgreSQL binaries, kept in
    /// `dir` (`IQ_DATA_DIR`).
    Embedded { dir: PathBuf },
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::Url(_) => f.write_str("Url(<redacted>)"),
            Database::Embedded { dir } => f.debug_struct("Embedded").field("dir", dir).finish(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct DatabaseConfig {
    /// PostgreSQL URL, e.g. postgres://iq:secret@db:5432/iq; unset: an embedded cluster
    /// in IQ_DATA_DIR.
    #[arg(long, env, hide_env_values = true)]
    pub database_url: Option<Secret>,

    /// Data folder of the embedded cluster (when DATABASE_URL is unset).
    #[arg(long, env, default_value = ".iq-data", value_parser = absolute)]
    pub iq_data_dir: PathBuf,

    /// Load demo data into an empty DATABASE_URL database too (the embedded cluster
    /// always gets it).
    #[arg(long, env, num_args = 0..=1, default_value_t = false, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub demo_data: bool,

    /// Database connections in all: half go to the workers' own pools for dataset
    /// reads (when that leaves each worker at least one), the rest are shared.
    #[arg(long, env, value_parser = clap::value_parser!(u16).range(1..),
          default_value_t = PoolSettings::default().max_size as u16)]
    pub db_pool_size: u16,

    /// Longest wait for a connection, in milliseconds.
    #[arg(long, env, value_parser = millis(1..), default_value_t = PoolSettings::default().acquire_timeout.into())]
    pub db_acquire_timeout_ms: Millis,

    /// Server-side statement timeout, in milliseconds.
    #[arg(long, env, value_parser = millis(1..), default_value_t = PoolSettings::default().statement_timeout.into())]
    pub db_statement_timeout_ms: Millis,
}

/// A folder as an absolute path, so that it means the same after the service changes
/// its working directory (the embedded cluster does).
fn absolute(text: &str) -> Result<PathBuf, String> {
    std::path::absolute(text).map_err(|e| e.to_string())
}

impl DatabaseConfig {
    pub fn database(&self) -> Database {
        match &self.database_url {
            Some(url) => Database::Url(url.expose().to_owned()),
            None => Database::Embedded {
                dir: self.iq_data_dir.clone(),
            },
        }
    }

    /// Points the service at `database`.
    pub fn set_database(&mut self, database: Database) {
        match database {
            Database::Url(url) => self.database_url = Some(Secret::new(url)),
            Database::Embedded { dir } => {
                self.database_url = None;
                self.iq_data_dir = dir;
            }
        }
    }

    pub fn pool(&self) -> PoolSettings {
        PoolSettings {
            max_size: usize::from(self.db_pool_size),
            acquire_timeout: self.db_acquire_timeout_ms.0,
            statement_timeout: self.db_statement_timeout_ms.0,
            ..PoolSettings::default()
        }
    }
}
