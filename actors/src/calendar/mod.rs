//! Every rule of the trading calendar, in one place:
//!
//! - here: the service's "today" and the member delay cutoff (D5), pure functions the
//!   dataset actor feeds with open days read from the database;
//! - [`change`]: an administrator's change (a list of open days, or years rebuilt from a
//!   weekend rule and holidays) checked into a plan, without the database;
//! - [`service`]: the [`Calendar`] service that writes a plan, all or nothing, refusing
//!   to close a day that holds data.

pub mod change;
pub mod service;

pub use change::{CalendarChange, CalendarPlan, CalendarSummary};
pub use service::Calendar;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

/// Today's date in the service time zone.
pub fn service_today(now: DateTime<Utc>, tz: Tz) -> NaiveDate {
    now.with_timezone(&tz).date_naive()
}

/// The last microsecond of `date` in `tz`: what an `as_of` given as a date means (D17).
/// Where local midnight does not exist (a clock change at midnight), the day ends at
/// the first instant of the next one, less a microsecond.
pub fn end_of_day(date: NaiveDate, tz: Tz) -> DateTime<Utc> {
    let next = date.succ_opt().unwrap_or(date);
    let midnight = next.and_time(chrono::NaiveTime::MIN);
    let start = tz
        .from_local_datetime(&midnight)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| {
            // A gap at midnight: the local day begins an hour later at most.
            tz.from_local_datetime(&(midnight + chrono::Duration::hours(1)))
                .earliest()
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_else(|| midnight.and_utc())
        });
    start - chrono::Duration::microseconds(1)
}

/// The delay cutoff of D5: with `recent_open_days` the open trading days on or before
/// today, newest first, the cutoff is the open day `delay_days` positions before the
/// latest one (`0`: the latest itself). `None` when the calendar does not reach back
/// that far, in which case no delayed row is visible.
pub fn delay_cutoff(
    recent_open_days: impl IntoIterator<Item = NaiveDate>,
    delay_days: u32,
) -> Option<NaiveDate> {
    recent_open_days.into_iter().nth(delay_days as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Datelike, TimeZone, Weekday};

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    /// Weekdays on or before `today`, newest first, minus `holidays`.
    fn open_days_before(today: NaiveDate, holidays: &[NaiveDate]) -> Vec<NaiveDate> {
        today
            .iter_days()
            .rev()
            .take(60)
            .filter(|d| !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
            .filter(|d| !holidays.contains(d))
            .collect()
    }

    #[test]
    fn today_is_taken_in_the_service_time_zone() {
        let tz: Tz = "Asia/Shanghai".parse().unwrap();
        // 16:30 UTC on the 5th is 00:30 on the 6th in Shanghai.
        let late = Utc.with_ymd_and_hms(2024, 3, 5, 16, 30, 0).unwrap();
        assert_eq!(service_today(late, tz), date(2024, 3, 6));
        let early = Utc.with_ymd_and_hms(2024, 3, 5, 15, 59, 59).unwrap();
        assert_eq!(service_today(early, tz), date(2024, 3, 5));
        assert_eq!(service_today(late, chrono_tz::UTC), date(2024, 3, 5));
    }

    #[test]
    fn zero_delay_is_the_latest_open_day() {
        // Sunday 10 March 2024: the latest open day is Friday the 8th.
        let days = open_days_before(date(2024, 3, 10), &[]);
        assert_eq!(delay_cutoff(days, 0), Some(date(2024, 3, 8)));
    }

    #[test]
    fn delay_counts_open_days_skipping_weekends_and_holidays() {
        // Wednesday 13 March 2024, with Monday the 11th a holiday.
        let days = open_days_before(date(2024, 3, 13), &[date(2024, 3, 11)]);
        // open: 13, 12, (11 closed), 8, 7, 6, 5, 4, 1 ...
        assert_eq!(delay_cutoff(days.clone(), 1), Some(date(2024, 3, 12)));
        assert_eq!(delay_cutoff(days.clone(), 2), Some(date(2024, 3, 8)));
        assert_eq!(delay_cutoff(days, 7), Some(date(2024, 3, 1)));
    }

    #[test]
    fn a_calendar_too_short_hides_everything() {
        let days = vec![date(2024, 3, 13), date(2024, 3, 12)];
        assert_eq!(delay_cutoff(days.clone(), 1), Some(date(2024, 3, 12)));
        assert_eq!(delay_cutoff(days, 2), None);
        assert_eq!(delay_cutoff(Vec::new(), 0), None);
    }
}
