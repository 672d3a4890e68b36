//! The login brute-force limit (D23, replacing D6's; D28): failed logins within a
//! calendar minute are counted per (user name, client address), per address, and per
//! user name alone; going over any of them gives 42901 until the minute ends. An IPv6
//! client is counted by its /64 (one host holds a whole /64, so counting its addresses
//! one by one would count nothing), and a browser with the user's device cookie
//! ([`super::device`]) is not held by the per-name count. Wrong two-factor codes are
//! counted too: per sign-in ticket ([`CODES_PER_TICKET`], then the ticket is dead) and per
//! user per hour ([`CODES_PER_USER_HOUR`]).
//!
//! What this buys: a guesser at one address gets 5 tries a minute at one name and 20 at
//! all names together, and an attacker can no longer lock a user out from one address
//! (the per-name count that locked everyone out after 5 failures is now [`PER_USER`],
//! high enough that it takes many addresses working together, minute after minute).
//!
//! Counters live in Postgres so the limit holds across instances; logins are rare
//! enough that a statement per failure costs nothing. A counter's subject is a keyed
//! hash (HMAC with the server secret) of the user name or address, never the typed
//! text: a password typed into the user-name box must not be stored readable.

use std::net::IpAddr;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use super::api_key::KeyHasher;
use crate::db::Traced;
use crate::ApiError;

/// Failed logins allowed per (user name, client address) per calendar minute: what one
/// person mistyping a password meets.
pub const PER_USER_AND_ADDRESS: i32 = 5;
/// Failed logins allowed per client address per calendar minute, whatever the names.
pub const PER_ADDRESS: i32 = 20;
/// Failed logins allowed per user name per calendar minute from all addresses together:
/// a bound on a guessing botnet, far above what one address may do.
pub const PER_USER: i32 = 100;
/// Wrong codes a two-factor sign-in ticket survives (D28): the next attempt finds it dead.
pub const CODES_PER_TICKET: i32 = 5;
/// Wrong two-factor codes allowed per user per hour, from every ticket and login (D28).
pub const CODES_PER_USER_HOUR: i32 = 20;

/// How an address is counted: itself for IPv4, its /64 for IPv6.
fn counted(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The keyed hash of a counter's subject, as hex (never the typed text).
fn hashed(hasher: &KeyHasher, subject: &str) -> String {
    hasher
        .hash(subject)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn minute(now: DateTime<Utc>) -> DateTime<Utc> {
    now.duration_trunc(TimeDelta::minutes(1)).unwrap_or(now)
}

/// The counters an attempt touches, by the hex of their subjects' keyed hashes.
fn subjects(hasher: &KeyHasher, username: &str, ip: Option<IpAddr>) -> Vec<(String, i32)> {
    let hashed = |subject: String| hashed(hasher, &subject);
    // Without an address (no peer: only in-process tests) the pair counter stands for
    // the name from an unknown place.
    let place = ip.map_or_else(|| "unknown".to_owned(), counted);
    let mut subjects = vec![
        (hashed(format!("login-user:{username}")), PER_USER),
        (
            hashed(format!("login-user-at:{place}:{username}")),
            PER_USER_AND_ADDRESS,
        ),
    ];
    if let Some(ip) = ip {
        subjects.push((hashed(format!("login-ip:{}", counted(ip))), PER_ADDRESS));
    }
    subjects
}

/// One login attempt as the limits see it: the counters it touches and its minute.
pub struct LoginAttempt {
    subjects: Vec<(String, i32)>,
    minute: DateTime<Utc>,
    /// Seconds from the attempt to the next calendar minute: when a refusal ends.
    seconds_left: i64,
}

impl LoginAttempt {
    /// An attempt at `username` from `ip` (none: in-process tests) at `now`.
    pub fn new(hasher: &KeyHasher, username: &str, ip: Option<IpAddr>, now: DateTime<Utc>) -> Self {
        LoginAttempt {
            subjects: subjects(hasher, username, ip),
            minute: minute(now),
            seconds_left: 60 - now.timestamp().rem_euclid(60),
        }
    }

    /// The same attempt from a browser holding the user's device cookie: the per-name
    /// count neither holds it nor counts it (D28), the others do.
    pub fn from_known_device(mut self) -> Self {
        self.subjects.remove(0);
        self
    }

    /// Counts this attempt as a failure before the password is checked, so concurrent
    /// guesses cannot all slip past the limit; 42901 when it goes over. A login that then
    /// succeeds gives the count back with [`LoginAttempt::release`].
    pub async fn reserve(&self, client: &impl Traced) -> Result<(), ApiError> {
        let mut over = false;
        for (subject, allowed) in &self.subjects {
            let failures: i32 = client
                .query_value_named(
                    "login_limit.count_failure",
                    "INSERT INTO login_failures (subject, minute, failures) VALUES ($1, $2, 1) \
                     ON CONFLICT (subject, minute) DO UPDATE \
                     SET failures = login_failures.failures + 1 RETURNING failures",
                    &[subject, &self.minute],
                )
                .await?;
            over |= failures > *allowed;
        }
        let horizon = self.minute - TimeDelta::hours(1);
        client
            .execute_named(
                "login_limit.prune",
                "DELETE FROM login_failures WHERE minute < $1",
                &[&horizon],
            )
            .await?;
        if over {
            return Err(ApiError::limited(
                "too many failed logins; try again in the next minute",
                self.seconds_left,
            ));
        }
        Ok(())
    }

    /// Takes back the attempt [`LoginAttempt::reserve`] counted: the login succeeded.
    pub async fn release(&self, client: &impl Traced) -> Result<(), ApiError> {
        // The per-address count is given back too, so that many people behind one address
        // (an office's NAT) can log in. The price: an attacker who logs in to an account of
        // their own between guesses keeps it low, and is held by the per-name and per-pair
        // counts alone (5 guesses a minute per name).
        for (subject, _) in &self.subjects {
            client
                .execute_named(
                    "login_limit.release",
                    "UPDATE login_failures SET failures = failures - 1 \
                     WHERE subject = $1 AND minute = $2 AND failures > 0",
                    &[subject, &self.minute],
                )
                .await?;
        }
        Ok(())
    }
}

/// Wrong two-factor codes (D28): per sign-in ticket and per user per hour.
pub struct CodeFailures {
    /// (subject, bucket, allowed) of each counter.
    counters: Vec<(String, DateTime<Utc>, i32)>,
}

impl CodeFailures {
    /// The counters of a code for `username` at `now`, through the sign-in `ticket`
    /// (whose `expires` names its bucket) when it came through one.
    pub fn new(
        hasher: &KeyHasher,
        username: &str,
        ticket: Option<(&str, DateTime<Utc>)>,
        now: DateTime<Utc>,
    ) -> Self {
        let hour = now.duration_trunc(TimeDelta::hours(1)).unwrap_or(now);
        let mut counters = vec![(
            hashed(hasher, &format!("code-user:{username}")),
            hour,
            CODES_PER_USER_HOUR,
        )];
        if let Some((ticket, expires)) = ticket {
            counters.push((
                hashed(hasher, &format!("code-ticket:{ticket}")),
                minute(expires),
                CODES_PER_TICKET,
            ));
        }
        CodeFailures { counters }
    }

    /// Whether a counter is used up: `Some(true)` the ticket's (it is dead), `Some(false)`
    /// the user's hour; checked before a code is looked at.
    pub async fn exhausted(&self, client: &impl Traced) -> Result<Option<bool>, ApiError> {
        for (n, (subject, bucket, allowed)) in self.counters.iter().enumerate() {
            let failures: Option<i32> = client
                .query_opt_value_named(
                    "login_limit.code_failures",
                    "SELECT failures FROM login_failures WHERE subject = $1 AND minute = $2",
                    &[subject, bucket],
                )
                .await?;
            if failures.unwrap_or(0) >= *allowed {
                return Ok(Some(n == 1));
            }
        }
        Ok(None)
    }

    /// Counts a wrong code on every counter.
    pub async fn count(&self, client: &impl Traced) -> Result<(), ApiError> {
        for (subject, bucket, _) in &self.counters {
            client
                .execute_named(
                    "login_limit.count_code",
                    "INSERT INTO login_failures (subject, minute, failures) VALUES ($1, $2, 1) \
                     ON CONFLICT (subject, minute) DO UPDATE \
                     SET failures = login_failures.failures + 1",
                    &[subject, bucket],
                )
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_never_hold_the_typed_text() {
        let hasher = KeyHasher::new(b"a secret of at least thirty-two bytes!!");
        let typed = "correct horse battery staple";
        let subjects = subjects(&hasher, typed, "203.0.113.9".parse().ok());
        assert_eq!(subjects.len(), 3);
        for (subject, _) in &subjects {
            assert_eq!(subject.len(), 64);
            assert!(!subject.contains("horse") && !subject.contains("203.0"));
        }
        // The same name is the same counter wherever it comes from, the pair is not;
        // another secret gives another one.
        let elsewhere = super::subjects(&hasher, typed, "198.51.100.7".parse().ok());
        assert_eq!(subjects[0].0, elsewhere[0].0);
        assert_ne!(subjects[1].0, elsewhere[1].0);
        let other = KeyHasher::new(b"another secret of at least thirty-two b");
        assert_ne!(subjects[0].0, super::subjects(&other, typed, None)[0].0);
    }

    #[test]
    fn ipv6_addresses_are_counted_by_their_64() {
        let at = |ip: &str| counted(ip.parse().unwrap());
        assert_eq!(at("2001:db8:1:2:aaaa::1"), at("2001:db8:1:2:ffff::9"));
        assert_ne!(at("2001:db8:1:2::1"), at("2001:db8:1:3::1"));
        assert_eq!(at("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(at("203.0.113.9"), "203.0.113.9");
        assert_eq!(at("::ffff:203.0.113.9"), "203.0.113.9");
        let hasher = KeyHasher::new(b"a secret of at least thirty-two bytes!!");
        let one = subjects(&hasher, "ana", "2001:db8::1".parse().ok());
        let two = subjects(&hasher, "ana", "2001:db8::2".parse().ok());
        assert_eq!(one, two);
    }
}
