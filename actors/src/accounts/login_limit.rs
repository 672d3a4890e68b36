//! The login brute-force limit (D6): more than 5 failed logins for one user name, or 20
//! from one client address, within a calendar minute gives 42901 until the minute ends.
//!
//! Counters live in Postgres so the limit holds across instances; logins are rare
//! enough that a statement per failure costs nothing. A counter's subject is a keyed
//! hash (HMAC with the server secret) of the user name or address, never the typed
//! text: a password typed into the user-name box must not be stored readable.

use std::net::IpAddr;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use super::api_key::KeyHasher;
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// Failed logins allowed per user name per calendar minute.
pub const PER_USER: i32 = 5;
/// Failed logins allowed per client address per calendar minute.
pub const PER_ADDRESS: i32 = 20;

fn minute(now: DateTime<Utc>) -> DateTime<Utc> {
    now.duration_trunc(TimeDelta::minutes(1)).unwrap_or(now)
}

/// The counters an attempt touches, by the hex of their subjects' keyed hashes.
fn subjects(hasher: &KeyHasher, username: &str, ip: Option<IpAddr>) -> Vec<(String, i32)> {
    let hashed = |subject: String| -> String {
        hasher
            .hash(&subject)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let mut subjects = vec![(hashed(format!("login-user:{username}")), PER_USER)];
    if let Some(ip) = ip {
        subjects.push((hashed(format!("login-ip:{ip}")), PER_ADDRESS));
    }
    subjects
}

/// Counts this attempt as a failure before the password is checked, so concurrent
/// guesses cannot all slip past the limit; 42901 when it goes over. A login that then
/// succeeds gives the count back with [`release`].
pub async fn reserve(
    client: &impl Traced,
    hasher: &KeyHasher,
    username: &str,
    ip: Option<IpAddr>,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let minute = minute(now);
    let mut over = false;
    for (subject, allowed) in subjects(hasher, username, ip) {
        let failures: i32 = client
            .query_one_named(
                "login_limit.count_failure",
                "INSERT INTO login_failures (subject, minute, failures) VALUES ($1, $2, 1) \
                 ON CONFLICT (subject, minute) DO UPDATE \
                 SET failures = login_failures.failures + 1 RETURNING failures",
                &[&subject, &minute],
            )
            .await?
            .try_get(0)?;
        over |= failures > allowed;
    }
    let horizon = minute - TimeDelta::hours(1);
    client
        .execute_named(
            "login_limit.prune",
            "DELETE FROM login_failures WHERE minute < $1",
            &[&horizon],
        )
        .await?;
    if over {
        return Err(ApiError::new(
            ErrorCode::RateLimited,
            "too many failed logins; try again in the next minute",
        ));
    }
    Ok(())
}

/// Takes back the attempt [`reserve`] counted: the login succeeded.
pub async fn release(
    client: &impl Traced,
    hasher: &KeyHasher,
    username: &str,
    ip: Option<IpAddr>,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let minute = minute(now);
    for (subject, _) in subjects(hasher, username, ip) {
        client
            .execute_named(
                "login_limit.release",
                "UPDATE login_failures SET failures = failures - 1 \
                 WHERE subject = $1 AND minute = $2 AND failures > 0",
                &[&subject, &minute],
            )
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_never_hold_the_typed_text() {
        let hasher = KeyHasher::new(b"a secret of at least thirty-two bytes!!");
        let typed = "correct horse battery staple";
        let subjects = subjects(&hasher, typed, "203.0.113.9".parse().ok());
        assert_eq!(subjects.len(), 2);
        for (subject, _) in &subjects {
            assert_eq!(subject.len(), 64);
            assert!(!subject.contains("horse") && !subject.contains("203.0"));
        }
        // The same name is the same counter; another secret gives another one.
        assert_eq!(subjects[0].0, super::subjects(&hasher, typed, None)[0].0);
        let other = KeyHasher::new(b"another secret of at least thirty-two b");
        assert_ne!(subjects[0].0, super::subjects(&other, typed, None)[0].0);
    }
}
