//! Typed settings, read from environment variables (decisions D10).
//!
//! Every variable has a default; a bad value is a start-up error that names the
//! variable. Secrets are wrapped so that printing the settings never shows them. Tests build `Settings` directly, replacing
//! the clock and the database.

use std::env;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use chrono_tz::Tz;
use ipnet::IpNet;
use iq_actors::accounts::SessionPolicy;
use iq_actors::clock::{Clock, SystemClock};
use iq_actors::db::PoolSettings;
use iq_actors::imports::ImportLimits;
use iq_actors::quota::QuotaSettings;

use crate::http::access_log::AccessLog;
use crate::http::body_pace::BodyPace;
use crate::telemetry::LogFormat;

/// Where the data lives. `Debug` hides the URL, which usually holds a password.
#[derive(Clone)]
pub enum Database {
    /// An external PostgreSQL (`DATABASE_URL`).
    Url(String),
    /// A cluster the service runs itself from the machine's PostgreSQL binaries, kept in
    /// `dir` (`IQ_DATA_DIR`, default `./.iq-data`).
    Embedded { dir: PathBuf },
}

/// The server secret keys are hashed with (`KEY_SECRET`). `Debug` never prints it.
#[derive(Clone)]
pub struct KeySecret(Vec<u8>);

impl KeySecret {
    /// Shortest accepted secret, in bytes.
    pub const MIN_LEN: usize = 32;

    pub fn new(bytes: Vec<u8>) -> Result<KeySecret, String> {
        if bytes.len() < Self::MIN_LEN {
            return Err(format!(
                "must be at least {} characters long",
                Self::MIN_LEN
            ));
        }
        Ok(KeySecret(bytes))
    }

    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for KeySecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeySecret(<redacted>)")
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::Url(_) => f.write_str("Url(<redacted>)"),
            Database::Embedded { dir } => f.debug_struct("Embedded").field("dir", dir).finish(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub listen_addr: String,
    /// Where `/metrics` is served (`METRICS_ADDR`, default `127.0.0.1:9464`); `None`
    /// (`METRICS_ADDR=api`): on `listen_addr`, public to whoever reaches it.
    pub metrics_addr: Option<String>,
    pub database: Database,
    pub service_tz: Tz,
    /// Server-wide cap on `limit` (1..=5000).
    pub max_limit: u32,
    pub site_name: String,
    /// Load demo data into an empty database even when it is not the embedded one.
    pub demo_data: bool,
    pub log_format: LogFormat,
    /// HTTP worker threads; `None`: one per core.
    pub workers: Option<usize>,
    pub pool: PoolSettings,
    pub page_cache_bytes: u64,
    pub page_ttl: Duration,
    /// `None`: with the embedded database, a secret kept in its data folder; with
    /// `DATABASE_URL`, a start-up error (every instance must share one secret).
    pub key_secret: Option<KeySecret>,
    /// Peers whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`, addresses or CIDR).
    pub trusted_proxies: Vec<IpNet>,
    /// Whether the session cookie is marked `Secure` (`COOKIE_SECURE`; set it behind TLS).
    pub cookie_secure: bool,
    pub sessions: SessionPolicy,
    /// Flush interval, lease TTL, call-log retention, idle release (`QUOTA_FLUSH_MS`,
    /// `QUOTA_LEASE_TTL_MS`, `CALL_LOG_RETENTION_DAYS`).
    pub quota: QuotaSettings,
    /// Step 7 on or off. Always on in a deployment (no variable turns it off); the key
    /// path benchmark turns it off to measure what the quota costs.
    pub quota_enforced: bool,
    /// The largest quote file an import accepts (`IMPORT_MAX_MB`).
    pub import_max_bytes: usize,
    /// Cells a quote file may hold and bytes one workbook part may inflate to
    /// (`IMPORT_MAX_CELLS`, `IMPORT_MAX_ENTRY_MB`).
    pub import_limits: ImportLimits,
    /// Queries a visitor address or a session may make a minute (`WEBSITE_PER_MINUTE`,
    /// D15); 0: no limit.
    pub website_per_minute: u32,
    /// The pace every request body must keep (`BODY_GRACE_SECS`,
    /// `BODY_MIN_BYTES_PER_SEC`).
    pub body_pace: BodyPace,
    /// Open connections one client address may hold (`MAX_CONNECTIONS_PER_IP`); 0: no
    /// cap. Trusted proxies are not capped.
    pub max_connections_per_ip: u32,
    /// Which requests get an access-log line at info (`ACCESS_LOG`).
    pub access_log: AccessLog,
    /// How long a stop signal drains before the server stops accepting
    /// (`SHUTDOWN_DELAY_MS`, default 0): see [`crate::http::drain`].
    pub shutdown_delay: Duration,
    pub clock: Arc<dyn Clock>,
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {variable}: {problem}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub problem: String,
}

fn var(name: &'static str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn parsed<T: std::str::FromStr>(name: &'static str, default: T) -> Result<T, ConfigError>
where
    T::Err: std::fmt::Display,
{
    match var(name) {
        None => Ok(default),
        Some(text) => text.trim().parse().map_err(|e: T::Err| ConfigError {
            variable: name,
            problem: format!("{text:?} is not valid: {e}"),
        }),
    }
}

fn flag(name: &'static str) -> Result<bool, ConfigError> {
    match var(name).as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("0" | "false" | "no") => Ok(false),
        Some("1" | "true" | "yes") => Ok(true),
        Some(other) => Err(ConfigError {
            variable: name,
            problem: format!("{other:?} is not a boolean (use 1 or 0)"),
        }),
    }
}

/// A duration as whole milliseconds, for a default read back from the environment.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `METRICS_ADDR`: its own listener, on the machine only unless told otherwise; `api`
/// serves `/metrics` on the public listener.
fn metrics_addr(value: Option<String>) -> Option<String> {
    match value {
        None => Some("127.0.0.1:9464".into()),
        Some(addr) if addr.eq_ignore_ascii_case("api") => None,
        Some(addr) => Some(addr),
    }
}

impl Settings {
    pub fn from_env() -> Result<Settings, ConfigError> {
        let database = match var("DATABASE_URL") {
            Some(url) => Database::Url(url),
            None => {
                let dir = PathBuf::from(var("IQ_DATA_DIR").unwrap_or_else(|| ".iq-data".into()));
                let dir = std::path::absolute(&dir).map_err(|e| ConfigError {
                    variable: "IQ_DATA_DIR",
                    problem: e.to_string(),
                })?;
                Database::Embedded { dir }
            }
        };
        // Each default is the one its component declares: one value, one place.
        let pool = PoolSettings::default();
        let pace = BodyPace::default();
        let max_limit: u32 = parsed("MAX_LIMIT", 5000)?;
        if !(1..=5000).contains(&max_limit) {
            return Err(ConfigError {
                variable: "MAX_LIMIT",
                problem: format!("{max_limit} is outside 1..=5000"),
            });
        }
        let log_format = match var("LOG_FORMAT").as_deref() {
            Some("json") => LogFormat::Json,
            Some("pretty") => LogFormat::Pretty,
            None if std::io::IsTerminal::is_terminal(&std::io::stderr()) => LogFormat::Pretty,
            None => LogFormat::Json,
            Some(other) => {
                return Err(ConfigError {
                    variable: "LOG_FORMAT",
                    problem: format!("{other:?} is not json or pretty"),
                })
            }
        };
        let workers: usize = parsed("WORKERS", 0)?;
        let key_secret = var("KEY_SECRET")
            .map(|s| KeySecret::new(s.into_bytes()))
            .transpose()
            .map_err(|problem| ConfigError {
                variable: "KEY_SECRET",
                problem,
            })?;
        let trusted_proxies = var("TRUSTED_PROXIES")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<std::net::IpAddr>().map(IpNet::from))
                    .map_err(|_| ConfigError {
                        variable: "TRUSTED_PROXIES",
                        problem: format!("{s:?} is not an IP address or CIDR range"),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sessions = SessionPolicy::default();
        let idle_minutes: i64 = parsed("SESSION_IDLE_MINUTES", sessions.idle.num_minutes())?;
        let max_hours: i64 = parsed("SESSION_MAX_HOURS", sessions.absolute.num_hours())?;
        if idle_minutes < 1 || max_hours < 1 {
            return Err(ConfigError {
                variable: "SESSION_IDLE_MINUTES",
                problem: "session lifetimes must be at least 1".into(),
            });
        }
        let quota = QuotaSettings::default();
        let flush_ms: u64 = parsed("QUOTA_FLUSH_MS", millis(quota.flush_interval))?;
        if !(10..=60_000).contains(&flush_ms) {
            return Err(ConfigError {
                variable: "QUOTA_FLUSH_MS",
                problem: format!("{flush_ms} is outside 10..=60000"),
            });
        }
        let ttl_ms: u64 = parsed("QUOTA_LEASE_TTL_MS", millis(quota.lease_ttl))?;
        if !(1_000..=600_000).contains(&ttl_ms) {
            return Err(ConfigError {
                variable: "QUOTA_LEASE_TTL_MS",
                problem: format!("{ttl_ms} is outside 1000..=600000"),
            });
        }
        let retention_days: u32 = parsed("CALL_LOG_RETENTION_DAYS", quota.retention_days)?;
        if retention_days < 1 {
            return Err(ConfigError {
                variable: "CALL_LOG_RETENTION_DAYS",
                problem: "keep at least 1 day (today's usage lives there)".into(),
            });
        }
        Ok(Settings {
            listen_addr: var("LISTEN_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into()),
            metrics_addr: metrics_addr(var("METRICS_ADDR")),
            database,
            service_tz: parsed("SERVICE_TZ", chrono_tz::Asia::Shanghai)?,
            max_limit,
            site_name: var("SITE_NAME").unwrap_or_else(|| "AI Hardware Price Index".into()),
            demo_data: flag("DEMO_DATA")?,
            log_format,
            workers: (workers > 0).then_some(workers),
            pool: PoolSettings {
                max_size: parsed("DB_POOL_SIZE", pool.max_size)?,
                acquire_timeout: Duration::from_millis(parsed(
                    "DB_ACQUIRE_TIMEOUT_MS",
                    millis(pool.acquire_timeout),
                )?),
                statement_timeout: Duration::from_millis(parsed(
                    "DB_STATEMENT_TIMEOUT_MS",
                    millis(pool.statement_timeout),
                )?),
                ..pool
            },
            page_cache_bytes: parsed::<u64>("PAGE_CACHE_MB", 256)? * 1024 * 1024,
            page_ttl: Duration::from_secs(parsed("PAGE_CACHE_TTL_SECS", 300)?),
            key_secret,
            trusted_proxies,
            cookie_secure: flag("COOKIE_SECURE")?,
            sessions: SessionPolicy {
                idle: TimeDelta::minutes(idle_minutes),
                absolute: TimeDelta::hours(max_hours),
            },
            quota: QuotaSettings {
                flush_interval: Duration::from_millis(flush_ms),
                lease_ttl: Duration::from_millis(ttl_ms),
                retention_days,
                ..quota
            },
            quota_enforced: true,
            import_max_bytes: parsed::<usize>("IMPORT_MAX_MB", 64)? * 1024 * 1024,
            import_limits: ImportLimits {
                max_cells: parsed("IMPORT_MAX_CELLS", ImportLimits::default().max_cells)?,
                max_entry_bytes: parsed::<u64>(
                    "IMPORT_MAX_ENTRY_MB",
                    ImportLimits::default().max_entry_bytes / (1024 * 1024),
                )?
                .saturating_mul(1024 * 1024),
            },
            website_per_minute: parsed("WEBSITE_PER_MINUTE", 300)?,
            body_pace: BodyPace {
                grace: Duration::from_secs(parsed("BODY_GRACE_SECS", pace.grace.as_secs())?),
                min_bytes_per_sec: parsed("BODY_MIN_BYTES_PER_SEC", pace.min_bytes_per_sec)?,
            },
            max_connections_per_ip: parsed("MAX_CONNECTIONS_PER_IP", 256)?,
            access_log: parsed("ACCESS_LOG", AccessLog::default())?,
            shutdown_delay: {
                let ms: u64 = parsed("SHUTDOWN_DELAY_MS", 0)?;
                if ms > 120_000 {
                    return Err(ConfigError {
                        variable: "SHUTDOWN_DELAY_MS",
                        problem: format!("{ms} is more than 120000 (two minutes)"),
                    });
                }
                Duration::from_millis(ms)
            },
            clock: Arc::new(SystemClock),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_stay_off_the_public_listener_unless_asked() {
        assert_eq!(metrics_addr(None).as_deref(), Some("127.0.0.1:9464"));
        assert_eq!(metrics_addr(Some("API".into())), None);
        assert_eq!(
            metrics_addr(Some("0.0.0.0:9000".into())).as_deref(),
            Some("0.0.0.0:9000")
        );
    }
}
