//! What the quota's unit tests share: instants on the tests' day and the free tier's
//! limits.

use chrono::{DateTime, TimeZone, Utc};

use super::window::Limits;

/// 2026-11-20 at `h:m:s` UTC.
pub fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, h, m, s)
        .single()
        .unwrap()
}

/// The free tier's default limits.
pub const FREE: Limits = Limits {
    per_minute: 10,
    per_day: 10,
};
