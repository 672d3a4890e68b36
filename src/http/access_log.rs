//! Which requests get an access-log line at `info` (`ACCESS_LOG`): `all` (the
//! default), `errors` (answers of 400 and above only), `sample:N` (every N-th success
//! and every error) or `off`. A line left out is still written at `debug`; warnings and
//! errors a request logs are separate lines and always carry its `request_id`.
//!
//! This module decides; it must never write a log line itself.

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccessLog {
    #[default]
    All,
    Errors,
    /// Every N-th success (N >= 1), every error.
    Sample(u64),
    Off,
}

/// Successes seen by sampling, process-wide.
static SEEN: AtomicU64 = AtomicU64::new(0);

impl AccessLog {
    /// Whether an answer with `status` gets its line at `info`.
    pub fn keeps(self, status: u16) -> bool {
        match self {
            AccessLog::All => true,
            AccessLog::Off => false,
            _ if status >= 400 => true,
            AccessLog::Errors => false,
            AccessLog::Sample(n) => SEEN.fetch_add(1, Ordering::Relaxed) % n == 0,
        }
    }
}

impl std::fmt::Display for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccessLog::All => f.write_str("all"),
            AccessLog::Errors => f.write_str("errors"),
            AccessLog::Sample(n) => write!(f, "sample:{n}"),
            AccessLog::Off => f.write_str("off"),
        }
    }
}

impl FromStr for AccessLog {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(AccessLog::All),
            "errors" => Ok(AccessLog::Errors),
            "off" => Ok(AccessLog::Off),
            other => other
                .strip_prefix("sample:")
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|n| *n >= 1)
                .map(AccessLog::Sample)
                .ok_or_else(|| "use all, errors, off or sample:N (N at least 1)".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_and_decide() {
        assert_eq!("ALL".parse(), Ok(AccessLog::All));
        assert_eq!("sample:10".parse(), Ok(AccessLog::Sample(10)));
        for setting in [
            AccessLog::All,
            AccessLog::Errors,
            AccessLog::Sample(7),
            AccessLog::Off,
        ] {
            assert_eq!(setting.to_string().parse(), Ok(setting));
        }
        assert!("sample:0".parse::<AccessLog>().is_err());
        assert!("some".parse::<AccessLog>().is_err());
        assert!(AccessLog::Errors.keeps(404) && !AccessLog::Errors.keeps(200));
        assert!(!AccessLog::Off.keeps(500));
        assert!(AccessLog::Sample(1_000_000).keeps(503));
        let kept = (0..1000)
            .filter(|_| AccessLog::Sample(10).keeps(200))
            .count();
        // Other tests may sample at the same time; the share stays near a tenth.
        assert!((90..=110).contains(&kept), "{kept}");
    }
}
