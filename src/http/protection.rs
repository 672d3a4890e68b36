//! Protection for callers without a key (D15): a per-minute limit per visitor address
//! or per session, kept in this instance's memory, the limit on `POST /setup` before
//! initialisation, and the same per key on the event feed, which no quota counts (D22). It is a protection, not a quota: never written to the
//! database or the call log, and a refused call does not count.
//!
//! Windows are calendar minutes of the service clock (UTC), like the key windows, so
//! tests move them with the clock. Subjects are kept as 64-bit hashes under a random
//! per-process key: a session id is a secret and is not kept here in clear. The table
//! is bounded; a subject evicted from it starts its minute afresh, which only ever
//! lets a caller through, never refuses one wrongly.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use iq_actors::clock::Clock;
use iq_actors::ApiError;
use moka::sync::Cache;

use super::error::HttpError;

/// Subjects remembered at once, per limiter.
const SUBJECTS: u64 = 200_000;

/// At most `limit` calls per calendar minute for each subject.
pub struct MinuteLimiter {
    limit: u32,
    keys: RandomState,
    /// Per subject, `minute << 24 | count`: one atomic word, so admitting is exact
    /// without a lock.
    windows: Cache<u64, Arc<AtomicU64>>,
}

/// Calls counted in one window fit in the low 24 bits.
const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

impl MinuteLimiter {
    /// `limit` 0 turns the limiter off.
    pub fn new(limit: u32) -> Self {
        MinuteLimiter {
            limit: limit.min(COUNT_MASK as u32),
            keys: RandomState::new(),
            windows: Cache::builder()
                .max_capacity(SUBJECTS)
                .time_to_idle(Duration::from_secs(120))
                .build(),
        }
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Counts a call of `subject` at `now`, or refuses it with the seconds until the
    /// minute ends (at least 1).
    pub fn admit(&self, subject: impl Hash, now: DateTime<Utc>) -> Result<(), i64> {
        if self.limit == 0 {
            return Ok(());
        }
        let minute = u64::try_from(now.timestamp().div_euclid(60)).unwrap_or(0);
        let window = self
            .windows
            .get_with(self.keys.hash_one(subject), Default::default);
        let limit = u64::from(self.limit);
        let admitted = window.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
            let (seen_minute, count) = (word >> COUNT_BITS, word & COUNT_MASK);
            if seen_minute != minute {
                Some(minute << COUNT_BITS | 1)
            } else if count < limit {
                Some(word + 1)
            } else {
                None
            }
        });
        admitted
            .map(|_| ())
            .map_err(|_| 60 - now.timestamp().rem_euclid(60))
    }
}

/// Who a caller is, for the limit: a keyless one, or a key on the event feed.
#[derive(Hash)]
pub enum KeylessSubject<'a> {
    Address(Option<std::net::IpAddr>),
    /// A signed-in user, all their sessions together (D28: ten sessions must not give
    /// ten times the limit).
    User(i64),
    /// A session cookie that names no session (it is refused right after).
    Session(&'a str),
    /// A key's id, on `GET /api/v1/events`.
    Key(&'a str),
}

/// The instance's keyless protections.
pub struct Protection {
    clock: Arc<dyn Clock>,
    /// `WEBSITE_PER_MINUTE`: queries (and pages) of a visitor address or a session.
    pub website: MinuteLimiter,
    /// `POST /api/v1/setup` per address before initialisation.
    pub setup: MinuteLimiter,
    /// `GET /api/v1/events` per key, at the keyless limit (D22: the feed counts toward
    /// no quota, so it is protected like a caller without a key).
    pub events: MinuteLimiter,
    /// Whose each session seen is (by the SHA-256 of its id, never the id): the
    /// website's limit counts a user's sessions together (D28), and a session's owner
    /// never changes, so it is read from the database once per session, not per call.
    pub session_owners: Cache<[u8; 32], i64>,
}

/// Set-up attempts per address per minute before the service is initialised.
pub const SETUP_PER_MINUTE: u32 = 10;

impl Protection {
    pub fn new(clock: Arc<dyn Clock>, website_per_minute: u32) -> Self {
        Protection {
            clock,
            website: MinuteLimiter::new(website_per_minute),
            setup: MinuteLimiter::new(SETUP_PER_MINUTE),
            events: MinuteLimiter::new(website_per_minute),
            session_owners: Cache::builder()
                .max_capacity(SUBJECTS)
                .time_to_idle(Duration::from_secs(3600))
                .build(),
        }
    }

    /// Counts a call against `limiter`; a refusal (429 / 42901 with `Retry-After`)
    /// names the limit.
    pub fn admit(
        &self,
        limiter: &MinuteLimiter,
        subject: KeylessSubject<'_>,
    ) -> Result<(), HttpError> {
        let advice = match subject {
            KeylessSubject::Key(_) => {
                "calls of the event feed a minute with this key: wait for \
                                the next minute, and let `wait` hold each call instead"
            }
            _ => "calls a minute without a key: wait for the next minute, or use an API key",
        };
        limiter
            .admit(subject, self.clock.now())
            .map_err(|retry_after| {
                let message = format!("more than {} {advice}", limiter.limit());
                HttpError::from(ApiError::limited(message, retry_after))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(second: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, 4, 0, 0).unwrap()
            + chrono::Duration::seconds(second.into())
    }

    #[test]
    fn the_limit_holds_per_subject_and_minute() {
        let limiter = MinuteLimiter::new(3);
        for _ in 0..3 {
            assert!(limiter.admit("a", at(10)).is_ok());
        }
        assert_eq!(limiter.admit("a", at(15)), Err(45));
        // Refused calls do not count; another subject has its own window.
        assert_eq!(limiter.admit("a", at(59)), Err(1));
        assert!(limiter.admit("b", at(59)).is_ok());
        // The next minute starts afresh.
        assert!(limiter.admit("a", at(60)).is_ok());
    }

    #[test]
    fn zero_turns_it_off() {
        let limiter = MinuteLimiter::new(0);
        for _ in 0..1000 {
            assert!(limiter.admit("a", at(0)).is_ok());
        }
    }

    #[test]
    fn concurrent_calls_admit_exactly_the_limit() {
        let limiter = Arc::new(MinuteLimiter::new(500));
        let admitted: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let limiter = limiter.clone();
                    s.spawn(move || {
                        (0..300)
                            .filter(|_| limiter.admit("x", at(0)).is_ok())
                            .count()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(admitted, 500);
    }
}
