//! `YYYYMMDD`: the wire form of every business date the service reads or writes
//! (spec part 1; `YYYY-MM-DD` is also read where clients may send it).
//!
//! One type for every such date in and out, so a date is parsed and printed the same way
//! in query parameters, import cells, calendar lists, datasets and messages. Parsing
//! checks the shape byte by byte before it asks for a real calendar date: chrono's
//! `%Y` alone would also take signs and other widths. It never panics on any text.

use std::fmt;

use chrono::{Datelike, NaiveDate};
use serde::{Serialize, Serializer};

/// A business date, printed and serialised as `YYYYMMDD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WireDate(pub NaiveDate);

/// Why a text is not a date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateError {
    /// Not of the accepted form (`YYYYMMDD`, or `YYYY-MM-DD` where allowed).
    Shape,
    /// Of the form, but no such day (`20260230`).
    NotReal,
}

impl WireDate {
    /// `YYYYMMDD` or `YYYY-MM-DD`, exactly.
    pub fn parse(text: &str) -> Result<WireDate, DateError> {
        let b = text.as_bytes();
        match b.len() {
            8 => from_parts(b, (0..4, 4..6, 6..8)),
            10 if b[4] == b'-' && b[7] == b'-' => from_parts(b, (0..4, 5..7, 8..10)),
            _ => Err(DateError::Shape),
        }
    }

    /// `YYYY-MM-DD` only (forms, filters and workbook cells that write dates that way).
    pub fn parse_dashed(text: &str) -> Result<WireDate, DateError> {
        match text.len() {
            10 => WireDate::parse(text),
            _ => Err(DateError::Shape),
        }
    }

    /// `YYYYMMDD` only (lists the service itself documents in that form).
    pub fn parse_compact(text: &str) -> Result<WireDate, DateError> {
        match text.len() {
            8 => WireDate::parse(text),
            _ => Err(DateError::Shape),
        }
    }
}

fn from_parts(
    b: &[u8],
    (year, month, day): (
        std::ops::Range<usize>,
        std::ops::Range<usize>,
        std::ops::Range<usize>,
    ),
) -> Result<WireDate, DateError> {
    let number = |r: std::ops::Range<usize>| -> Result<u32, DateError> {
        let digits = b.get(r).ok_or(DateError::Shape)?;
        digits.iter().try_fold(0u32, |n, d| {
            if d.is_ascii_digit() {
                Ok(n * 10 + u32::from(d - b'0'))
            } else {
                Err(DateError::Shape)
            }
        })
    };
    let (year, month, day) = (number(year)?, number(month)?, number(day)?);
    i32::try_from(year)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, month, day))
        .map(WireDate)
        .ok_or(DateError::NotReal)
}

impl fmt::Display for WireDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        write!(f, "{:04}{:02}{:02}", d.year(), d.month(), d.day())
    }
}

impl Serialize for WireDate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl From<NaiveDate> for WireDate {
    fn from(date: NaiveDate) -> Self {
        WireDate(date)
    }
}

/// Timestamps in request bodies (`expires_at`): RFC 3339 with an offset, such as
/// `2027-01-31T00:00:00Z`; anything else is refused with a message naming that form
/// (a date alone says nothing about the hour or the zone).
pub mod timestamp {
    use chrono::{DateTime, SubsecRound, Utc};
    use serde::{de::Error, Deserialize, Deserializer};

    /// The accepted form, for messages.
    pub const FORM: &str = "an RFC 3339 timestamp with an offset, such as 2027-01-31T00:00:00Z or \
         2027-01-31T08:00:00+08:00";

    /// The service's one reader of instants (bodies, query parameters, pages): as UTC,
    /// truncated to the microsecond, the precision PostgreSQL keeps, so an instant
    /// read back compares equal to the one written (and equal instants are one cache
    /// entry).
    pub fn parse(text: &str) -> Result<DateTime<Utc>, String> {
        DateTime::parse_from_rfc3339(text)
            .map(|at| at.with_timezone(&Utc).trunc_subsecs(6))
            .map_err(|_| format!("must be {FORM}"))
    }

    /// An optional timestamp field (`null` or absent: `None`).
    pub fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        let text: Option<String> = Deserialize::deserialize(d)?;
        text.as_deref()
            .map(parse)
            .transpose()
            .map_err(D::Error::custom)
    }

    /// A patch's timestamp field: absent leaves it alone (`None`, with
    /// `#[serde(default)]`), `null` clears it (`Some(None)`).
    pub fn present<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<DateTime<Utc>>>, D::Error> {
        optional(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn both_forms_and_only_real_dates() {
        let leap = WireDate(date(2024, 2, 29));
        assert_eq!(WireDate::parse("20240229"), Ok(leap));
        assert_eq!(WireDate::parse("2024-02-29"), Ok(leap));
        assert_eq!(WireDate::parse("20230229"), Err(DateError::NotReal));
        assert_eq!(WireDate::parse("2024-13-01"), Err(DateError::NotReal));
        for bad in [
            "",
            "2024229",
            "+2024022",
            "2024/02/29",
            "2024-2-29 ",
            "２０２４０２２９",
        ] {
            assert_eq!(WireDate::parse(bad), Err(DateError::Shape), "{bad}");
        }
        assert_eq!(WireDate::parse_compact("2024-02-29"), Err(DateError::Shape));
        assert_eq!(WireDate::parse_compact("20240229"), Ok(leap));
    }

    #[test]
    fn prints_and_serialises_as_yyyymmdd() {
        let day = WireDate(date(2026, 1, 5));
        assert_eq!(day.to_string(), "20260105");
        assert_eq!(serde_json::to_string(&day).unwrap(), "\"20260105\"");
    }

    #[test]
    fn timestamps_need_an_offset_and_say_so() {
        assert!(timestamp::parse("2027-01-31T00:00:00Z").is_ok());
        assert!(timestamp::parse("2027-01-31T08:00:00+08:00").is_ok());
        for bad in ["2027-01-31", "20270131", "2027-01-31T00:00:00", "soon"] {
            let message = timestamp::parse(bad).unwrap_err();
            assert!(message.contains("RFC 3339"), "{bad}: {message}");
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused(text in "\\PC{0,12}") {
            if let Ok(day) = WireDate::parse(&text) {
                let dashed = day.0.format("%Y-%m-%d").to_string();
                prop_assert!(text == day.to_string() || text == dashed, "{text}");
            }
        }

        #[test]
        fn every_real_date_round_trips(days in 0i64..3_652_059) {
            let day = WireDate(date(1, 1, 1) + chrono::Duration::days(days));
            prop_assert_eq!(WireDate::parse(&day.to_string()), Ok(day));
        }
    }
}
