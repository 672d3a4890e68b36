//! The QuotaActor's messages and their answers: what the front asks of step 7, and what
//! shutdown and the benchmark ask. Types only, and how a verdict reads as an answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::{DateTime, Utc};
use tracing::Span;

use super::decision::Verdict;
use super::status::Status;
use super::subject::Subject;
use super::window::{Limits, Window};
use crate::{ApiError, ErrorCode};

/// The answer to a [`Charge`]: the headers' status (when known) and the verdict.
#[derive(Debug, Clone)]
pub struct Admission {
    pub status: Option<Status>,
    /// The window that refused, for the 429's headers.
    pub refused: Option<Window>,
    pub result: Result<(), ApiError>,
}

impl Admission {
    pub(super) fn of(verdict: Verdict) -> Admission {
        match verdict {
            Verdict::Admit(status) => Admission {
                status: Some(status),
                refused: None,
                result: Ok(()),
            },
            Verdict::Refuse(window, status) => Admission {
                status: Some(status),
                refused: Some(window),
                result: Err(match window {
                    Window::Day => ApiError::new(
                        ErrorCode::DailyQuotaExhausted,
                        "daily quota used up; retry the next UTC day",
                    ),
                    Window::Minute => ApiError::new(
                        ErrorCode::RateLimited,
                        "per-minute rate exceeded; back off to the next minute",
                    ),
                }),
            },
            Verdict::Lease | Verdict::Report => Admission::unavailable(),
        }
    }

    pub(super) fn unavailable() -> Admission {
        Admission::failed(ApiError::internal("quota store unreachable"))
    }

    /// No verdict: the quota could not be asked.
    pub fn failed(error: impl Into<ApiError>) -> Admission {
        Admission {
            status: None,
            refused: None,
            result: Err(error.into()),
        }
    }
}

/// Step 7 for one key-authenticated query. `count == false` only asks for the status
/// (the query was refused before step 7 and does not count, but carries the headers).
#[derive(Message)]
#[rtype(result = "Admission")]
pub struct Charge {
    pub key_id: Arc<str>,
    /// The key's effective limits ([`Limits::effective`]).
    pub limits: Limits,
    /// The key's owner, whose account the call is charged to as well (D11).
    pub user_id: i64,
    /// The account's caps, from the owner's tier ([`super::account_limits`]).
    pub account_limits: Limits,
    pub count: bool,
    /// The caller's span; a charge the shard's actor serves runs in a `quota.charge`
    /// span under it (the shard's handle makes it).
    pub span: Span,
}

/// What the flusher tells the QuotaActor after each statement.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub enum Flushed {
    /// A batch of `instance` landed; the statement was sent at `sent` (it renewed the
    /// leases from then). `used`: the day calls it wrote, per subject and day.
    Written {
        instance: i64,
        sent: Instant,
        used: Vec<(Subject, DateTime<Utc>, i64)>,
    },
    /// The database could not be reached; the flusher retries.
    Failed,
    /// The database refused `instance`: its leases were reclaimed.
    Fenced { instance: i64 },
}

/// Shutdown: give every lease back and write everything, waiting at most `timeout`.
#[derive(Message)]
#[rtype(result = "DrainReport")]
pub struct Drain {
    pub timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainReport {
    /// Windows and call records that could not be written (the database was away).
    pub lost_windows: usize,
    pub lost_calls: usize,
}

/// A key or account is part of the way to its bound of unreported calls
/// ([`super::lease::report_at`], [`super::book`]):
/// report now, so that no call has to wait for the report.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ReportSoon;

/// A key, or its account, is down to a quarter of its last block ([`super::lease`]):
/// lease the next one now, while its calls are still admitted from memory.
#[derive(Message)]
#[rtype(result = "()")]
pub struct LeaseAhead {
    pub key_id: Arc<str>,
}

/// Counters for benchmarks and metrics.
#[derive(Message)]
#[rtype(result = "QuotaStats")]
pub struct ShowStats;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaStats {
    /// Every statement: leases, flushes, prunes.
    pub statements: u64,
    pub leases: u64,
    pub admitted: u64,
    pub refused: u64,
}
