//! How pages print dates and changes: readable dates ("12 Nov 2026") next to the
//! `YYYYMMDD` form users copy into code. Numbers are never reformatted: pages show the
//! decimal strings the API returns.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use iq_actors::wire_date::timestamp;
use iq_actors::wire_date::WireDate;

/// `12 Nov 2026`.
pub fn long_date(date: NaiveDate) -> String {
    date.format("%-d %b %Y").to_string()
}

/// `12 Nov 2026 18:00 UTC`: when something happened or ends, to the minute.
pub fn minute(at: DateTime<Utc>) -> String {
    at.format("%-d %b %Y %H:%M UTC").to_string()
}

/// `12 Nov 2026 18:00:05 UTC`: to the second, where attempts a moment apart must read
/// apart (deliveries, imports).
pub fn second(at: DateTime<Utc>) -> String {
    at.format("%-d %b %Y %H:%M:%S UTC").to_string()
}

/// An RFC 3339 instant from the API in the service time zone: `Mon 30 Nov 2026, 18:00
/// (Asia/Shanghai)`; the text as it came if it is not one.
pub fn local_time(instant: &str, tz: Tz) -> String {
    match timestamp::parse(instant).ok() {
        Some(at) => format!(
            "{} ({})",
            at.with_timezone(&tz).format("%a %-d %b %Y, %H:%M"),
            tz.name()
        ),
        None => instant.to_owned(),
    }
}

/// Whether an RFC 3339 instant from the API is before `now` (an instant it cannot read
/// is not).
pub fn is_past(instant: &str, now: DateTime<Utc>) -> bool {
    timestamp::parse(instant).is_ok_and(|at| at < now)
}

/// `20261112`.
pub fn wire(date: NaiveDate) -> String {
    date.format("%Y%m%d").to_string()
}

/// A `YYYYMMDD` string from the API as a date.
pub fn parse_wire(text: &str) -> Option<NaiveDate> {
    WireDate::parse(text).ok().map(|d| d.0)
}

/// A change as readers expect it, signed: `+10.123456` for a rise, `-1.5` and `0.000000`
/// as the API printed them.
pub fn signed(change: &str) -> String {
    if direction(change) == "up" && !change.starts_with('+') {
        format!("+{change}")
    } else {
        change.to_owned()
    }
}

/// `up`, `down` or `flat`, from a signed decimal string (for the colour of a change).
pub fn direction(change: &str) -> &'static str {
    if change.starts_with('-') {
        "down"
    } else if change.trim_start_matches(['0', '.', '+']).is_empty() {
        "flat"
    } else {
        "up"
    }
}

/// "7 trading days delayed" / "1 trading day delayed" / "up to date".
pub fn delay(days: u32) -> String {
    match days {
        0 => "up to date (no delay)".to_owned(),
        1 => "1 trading day delayed".to_owned(),
        n => format!("{n} trading days delayed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_directions() {
        let d = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        assert_eq!(long_date(d), "2 Nov 2026");
        assert_eq!(wire(d), "20261102");
        assert_eq!(parse_wire("20261102"), Some(d));
        assert_eq!(direction("-1.500000"), "down");
        assert_eq!(direction("0.000000"), "flat");
        assert_eq!(direction("2.000000"), "up");
        assert_eq!(signed("2.000000"), "+2.000000");
        assert_eq!(signed("-1.500000"), "-1.500000");
        assert_eq!(signed("0.000000"), "0.000000");
        assert_eq!(delay(7), "7 trading days delayed");
    }
}
