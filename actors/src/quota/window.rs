//! The two quota windows (a UTC calendar minute and a UTC calendar day, D6) and a
//! key's limits in them.
//!
//! Pure arithmetic on instants passed in: it never reads a clock, so the boundaries are
//! testable without waiting.

use chrono::{DateTime, Utc};

pub use crate::caller::Limits;

/// A quota window: a UTC calendar minute or a UTC calendar day (D6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Window {
    /// First: statements lock a subject's rows day first, then minute, as `'day'` sorts
    /// before `'minute'` (see the V4 and V10 migrations).
    Day,
    Minute,
}

impl Window {
    pub const ALL: [Window; 2] = [Window::Day, Window::Minute];

    pub fn as_str(self) -> &'static str {
        match self {
            Window::Day => "day",
            Window::Minute => "minute",
        }
    }

    /// The window's length in seconds (what `RateLimit-Policy` calls `w`).
    pub fn seconds(self) -> i64 {
        match self {
            Window::Day => 86_400,
            Window::Minute => 60,
        }
    }

    // UTC counts every minute and day alike, so a window starts at a multiple of its
    // length since the epoch. Both functions below run on every charge, in integers:
    // chrono's `duration_trunc` and its date arithmetic cost ten times more.

    /// The start of the window `now` falls in.
    pub fn start(self, now: DateTime<Utc>) -> DateTime<Utc> {
        let seconds = now.timestamp();
        DateTime::from_timestamp(seconds - seconds.rem_euclid(self.seconds()), 0).unwrap_or(now)
    }

    /// Whole seconds until the window `now` falls in ends (rounded up from whole
    /// milliseconds): at least 1, so a client told to wait never retries at once.
    pub fn seconds_left(self, now: DateTime<Utc>) -> i64 {
        const NANOS: i64 = 1_000_000_000;
        let into = now.timestamp().rem_euclid(self.seconds()) * NANOS
            + i64::from(now.timestamp_subsec_nanos());
        let millis = (self.seconds() * NANOS - into) / 1_000_000;
        ((millis + 999) / 1000).max(1)
    }
}

/// A caller's limits (declared with the caller, which carries them) read per window.
impl Limits {
    pub fn of(self, window: Window) -> i64 {
        match window {
            Window::Day => self.per_day,
            Window::Minute => self.per_minute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_clock::at;
    use super::*;
    use crate::caller::Tier;
    use chrono::TimeDelta;

    #[test]
    fn windows_are_utc_calendar_minutes_and_days() {
        let now = at(13, 45, 30);
        assert_eq!(Window::Minute.start(now), at(13, 45, 0));
        assert_eq!(Window::Day.start(now), at(0, 0, 0));
        assert_eq!(Window::Minute.seconds_left(now), 30);
        assert_eq!(Window::Day.seconds_left(now), 10 * 3600 + 14 * 60 + 30);
        assert_eq!(Window::Minute.seconds_left(at(13, 45, 0)), 60);
        let just_before = at(13, 45, 59) + TimeDelta::milliseconds(999);
        assert_eq!(Window::Minute.seconds_left(just_before), 1);
    }

    proptest::proptest! {
        /// What chrono's rounding and date arithmetic say, to the nanosecond, before and
        /// after the epoch.
        #[test]
        fn windows_are_what_chrono_computes(seconds in -5_000_000_000i64..5_000_000_000, nanos in 0u32..1_000_000_000) {
            use chrono::DurationRound;
            let now = DateTime::from_timestamp(seconds, nanos).unwrap();
            for window in Window::ALL {
                let length = TimeDelta::seconds(window.seconds());
                let start = now.duration_trunc(length).unwrap();
                proptest::prop_assert_eq!(window.start(now), start);
                let millis = (start + length - now).num_milliseconds();
                proptest::prop_assert_eq!(window.seconds_left(now), ((millis + 999) / 1000).max(1));
            }
        }
    }

    #[test]
    fn effective_limit_is_the_smaller_of_key_and_tier() {
        let tier = Tier {
            name: "pro".into(),
            per_minute: 100,
            per_day: 1000,
            max_rows: 5000,
            max_keys: None,
            delay_days: 0,
            member_indexes: true,
            max_webhooks: 1,
        };
        assert_eq!(
            Limits::effective(None, None, &tier),
            Limits {
                per_minute: 100,
                per_day: 1000
            }
        );
        assert_eq!(
            Limits::effective(Some(5), Some(5000), &tier),
            Limits {
                per_minute: 5,
                per_day: 1000
            }
        );
    }
}
