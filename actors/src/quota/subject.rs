//! The subjects a counted call is charged to: its key and its owner's account.
//!
//! The account cap implements D11:
//!
//! > D11. Quotas are also held per account. A key's counted calls also count against its
//! > owner's account, in the same UTC minute and day. Where the tier's `max_keys` is
//! > finite, the account as a whole may make at most `per_minute x max_keys` calls a
//! > minute and `per_day x max_keys` a day over all its keys, deleted keys included:
//! > deleting a key and creating another never restores quota. When the account's window
//! > binds, the answer is the same as a key's (42901 / 42902, 42902 when both windows are
//! > used up) and the rate-limit headers describe the binding window: of the key's and
//! > the account's minute and day windows, the one with the fewest calls left (on a tie,
//! > the one that resets first). The account caps use the tier's numbers, not a key's own
//! > overrides. An account whose tier has unlimited keys has no account cap. Exact across
//! > instances, as D6.
//!
//! An account is a quota subject exactly like a key: its windows are rows of the same
//! table under the id `acct:<user_id>`, leased and flushed by the same statements, so
//! it is exact across instances by the same rule (budget only from a lease that never
//! lets `granted` pass the limit). Key ids are `key_` and letters and digits, never a
//! colon, so the two kinds of id cannot collide; and the account's rows do not belong
//! to any key, which is why deleting keys never gives quota back.
//!
//! Every account is counted, capped or not: a tier that gains a cap in the middle of a
//! day (or a member moved to such a tier) is then charged for the calls already made
//! that day, as "count against its owner's account" says. An uncapped account is
//! leased under [`UNCAPPED`], a limit no account reaches, so it never refuses and never
//! binds the headers.
//!
//! Must never derive an account's caps from a key's own limits, and never let a key id
//! and an account id name the same rows.

use std::fmt;
use std::sync::Arc;

use crate::caller::Tier;

use super::window::Limits;

/// The "limit" of an account whose tier has unlimited keys: far above any call count,
/// and small enough that the lease arithmetic (a limit plus what is held) cannot
/// overflow. A finite cap above it is treated as this (it would never be reached).
pub const UNCAPPED: i64 = i64::MAX / 4;

/// Whose quota windows a row belongs to. Ordered as the id's bytes: that is the order
/// every statement locks rows in (the V10 migration sorts with `COLLATE "C"`, the
/// flush's batch is a sorted map of these), so two statements never deadlock. Shared,
/// not copied: every counted call keys its day windows' tally by its subjects.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Subject(Arc<str>);

impl Subject {
    pub fn key(key_id: &str) -> Subject {
        Subject(key_id.into())
    }

    pub fn account(user_id: i64) -> Subject {
        Subject(format!("acct:{user_id}").into())
    }

    /// The account's user id, for an account's subject.
    pub fn account_id(&self) -> Option<i64> {
        self.0.strip_prefix("acct:")?.parse().ok()
    }

    /// The id as `quota_windows.key_id` holds it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The account caps of a member of `tier` (D11): the tier's own limits (never a key's
/// overrides) times `max_keys`; [`UNCAPPED`] when the tier has unlimited keys.
pub fn account_limits(tier: &Tier) -> Limits {
    account_caps(tier.per_minute, tier.per_day, tier.max_keys).unwrap_or(Limits {
        per_minute: UNCAPPED,
        per_day: UNCAPPED,
    })
}

/// The caps of D11 from a tier's numbers; `None` when its keys are unlimited (no cap).
pub fn account_caps(per_minute: i64, per_day: i64, max_keys: Option<u32>) -> Option<Limits> {
    let max_keys = i64::from(max_keys?);
    let cap = |per_key: i64| per_key.max(0).saturating_mul(max_keys).min(UNCAPPED);
    Some(Limits {
        per_minute: cap(per_minute),
        per_day: cap(per_day),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(per_minute: i64, per_day: i64, max_keys: Option<u32>) -> Tier {
        Tier {
            name: "pro".into(),
            per_minute,
            per_day,
            max_rows: 5000,
            max_keys,
            delay_days: 0,
            member_indexes: true,
            max_webhooks: 1,
        }
    }

    #[test]
    fn the_caps_are_the_tier_limits_times_max_keys() {
        assert_eq!(
            account_limits(&tier(100, 1000, Some(3))),
            Limits {
                per_minute: 300,
                per_day: 3000
            }
        );
        // The free tier as seeded: one key, so the account may do what one key may.
        assert_eq!(
            account_limits(&tier(10, 10, Some(1))),
            Limits {
                per_minute: 10,
                per_day: 10
            }
        );
    }

    #[test]
    fn unlimited_keys_means_no_cap() {
        let limits = account_limits(&tier(100, 1000, None));
        assert_eq!((limits.per_minute, limits.per_day), (UNCAPPED, UNCAPPED));
        // The largest numbers the tiers table can hold stay below the overflow line.
        let huge = account_limits(&tier(
            i64::from(i32::MAX),
            i64::from(i32::MAX),
            Some(u32::MAX),
        ));
        assert_eq!(huge.per_day, UNCAPPED);
    }

    #[test]
    fn account_ids_cannot_be_key_ids_and_sort_apart() {
        let account = Subject::account(42);
        assert_eq!(account.as_str(), "acct:42");
        assert!(account.as_str().contains(':'));
        let key = Subject::key("key_Ab3");
        assert!(account < key, "one order for every statement");
    }
}
