//! What the quota's unit tests share: instants on the tests' day, the free tier's
//! limits and any others.

use chrono::{DateTime, TimeZone, Utc};

use super::window::Limits;

/// 2026-11-20 at `h:m:s` UTC.
pub fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, h, m, s)
        .single()
        .unwrap()
}

/// Limits of `per_minute` and `per_day` calls.
pub fn limits(per_minute: i64, per_day: i64) -> Limits {
    Limits {
        per_minute,
        per_day,
    }
}

/// The free tier's default limits.
pub const FREE: Limits = Limits {
    per_minute: 10,
    per_day: 10,
};
