//! Device cookies (D28, after OWASP's "Slow Down Online Guessing Attacks with Device
//! Cookies"): each successful sign-in gives the browser a token, bound to the user
//! name and signed with the server secret, valid [`DEVICE_VALID`]. A correct password
//! from a browser holding that user's valid token is never refused by the per-user-name
//! login bound, so a botnet guessing one name cannot lock its owner out; the bounds per
//! (name, address) and per address still hold.
//!
//! Stateless: nothing is stored, and a token only says "this browser signed in as this
//! name before". It never opens a session, and nothing here logs one.

use chrono::{DateTime, TimeDelta, Utc};
use subtle::ConstantTimeEq;

use super::api_key::KeyHasher;

/// How long a device token is honoured.
pub const DEVICE_VALID: TimeDelta = TimeDelta::days(365);
/// The longest token looked at (`v1.` + seconds + `.` + 64 hex digits, with room).
const MAX_LEN: usize = 100;

fn mac(hasher: &KeyHasher, username: &str, issued: i64) -> String {
    hasher
        .hash(&format!("device:v1:{issued}:{username}"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new token for a browser that just signed in as `username`.
pub fn issue(hasher: &KeyHasher, username: &str, now: DateTime<Utc>) -> String {
    let issued = now.timestamp();
    format!("v1.{issued}.{}", mac(hasher, username, issued))
}

/// Whether `presented` is a genuine token for `username`, issued within
/// [`DEVICE_VALID`] before `now` (and not after it).
pub fn trusted(
    hasher: &KeyHasher,
    username: &str,
    presented: Option<&str>,
    now: DateTime<Utc>,
) -> bool {
    let Some(token) = presented.filter(|t| t.len() <= MAX_LEN) else {
        return false;
    };
    let mut parts = token.splitn(3, '.');
    let (Some("v1"), Some(issued), Some(signature)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Ok(issued) = issued.parse::<i64>() else {
        return false;
    };
    let age = now.timestamp() - issued;
    if age < 0 || age > DEVICE_VALID.num_seconds() {
        return false;
    }
    mac(hasher, username, issued)
        .as_bytes()
        .ct_eq(signature.as_bytes())
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_token_is_trusted_for_its_name_within_a_year_only() {
        let hasher = KeyHasher::new(b"a secret of at least thirty-two bytes!!");
        let now = Utc.with_ymd_and_hms(2026, 11, 20, 4, 0, 0).unwrap();
        let token = issue(&hasher, "ana", now);
        assert!(trusted(&hasher, "ana", Some(&token), now));
        assert!(trusted(
            &hasher,
            "ana",
            Some(&token),
            now + TimeDelta::days(364)
        ));
        assert!(!trusted(
            &hasher,
            "ana",
            Some(&token),
            now + TimeDelta::days(366)
        ));
        assert!(!trusted(
            &hasher,
            "ana",
            Some(&token),
            now - TimeDelta::seconds(1)
        ));
        assert!(
            !trusted(&hasher, "Ana", Some(&token), now),
            "names are case-sensitive"
        );
        let other = KeyHasher::new(b"another secret of at least thirty-two b");
        assert!(!trusted(&other, "ana", Some(&token), now));
        for bad in ["", "v1", "v1.x.y", "v2.1.aa", &token[..token.len() - 1]] {
            assert!(!trusted(&hasher, "ana", Some(bad), now), "{bad}");
        }
        assert!(!trusted(&hasher, "ana", None, now));
    }

    proptest::proptest! {
        /// Any text is judged without a panic, and made-up text is never trusted.
        #[test]
        fn any_text_is_judged(text in "\\PC{0,120}") {
            let hasher = KeyHasher::new(b"a secret of at least thirty-two bytes!!");
            let now = Utc.with_ymd_and_hms(2026, 11, 20, 4, 0, 0).unwrap();
            proptest::prop_assert!(!trusted(&hasher, "ana", Some(&text), now));
        }
    }
}
