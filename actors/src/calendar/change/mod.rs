//! The administrators' trading-calendar change (D7, `PUT /api/v1/admin/calendar`), as a
//! plan: replace the whole calendar with a list of open days, or rebuild whole years
//! from a weekend rule and a holiday list.
//!
//! Pure: the body is checked here without the database ([`CalendarChange::plan`]);
//! [`super::service::Calendar`] writes the plan. It must never accept a date outside
//! the allowed years or a list past its size limit.

use std::collections::BTreeSet;

use crate::wire_date::{DateError, WireDate};
use crate::ApiError;
use chrono::{Datelike, NaiveDate, Weekday};
use serde::{Deserialize, Serialize};

/// Years a calendar may hold: wide enough for any history and plan, narrow enough that
/// a typo (`20026`, `0226`) is caught instead of stored.
pub const MIN_YEAR: i32 = 1990;
pub const MAX_YEAR: i32 = 2100;
/// The most years one year-range change may rebuild.
pub const MAX_SPAN_YEARS: i32 = 50;
/// The most days one `open_days` list may hold (about 80 years of weekdays).
pub const MAX_OPEN_DAYS: usize = 20_000;

const DAY_NAMES: [(&str, Weekday); 7] = [
    ("mon", Weekday::Mon),
    ("tue", Weekday::Tue),
    ("wed", Weekday::Wed),
    ("thu", Weekday::Thu),
    ("fri", Weekday::Fri),
    ("sat", Weekday::Sat),
    ("sun", Weekday::Sun),
];

/// The request body. Every field is optional so that a body of the wrong form gets a
/// message saying what is wrong with it; an untagged enum would only say "did not match
/// any variant". `null` counts as absent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarChange {
    /// Form A: the whole calendar, exactly these days.
    pub open_days: Option<Vec<String>>,
    /// Form B: the years rebuilt, inclusive. `i64` so an absurd number gets our
    /// message rather than an integer-overflow one.
    pub from_year: Option<i64>,
    pub to_year: Option<i64>,
    /// Form B: days of the span that are closed although not on a weekend.
    pub holidays: Option<Vec<String>>,
    /// Form B: days of the week that are closed; default `["sat", "sun"]`.
    pub weekend: Option<Vec<String>>,
}

// The schema says the two forms the flat struct above reads (`oneOf` the two below),
// which a derived schema of its optional fields could not: what each form requires.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for CalendarChange {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{OneOfBuilder, Ref};
        use utoipa::ToSchema;
        OneOfBuilder::new()
            .item(Ref::from_schema_name(OpenDays::name()))
            .item(Ref::from_schema_name(CalendarYears::name()))
            .description(Some(
                "`PUT /api/v1/admin/calendar`: one of two forms, not both.",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for CalendarChange {
    fn name() -> std::borrow::Cow<'static, str> {
        "CalendarChange".into()
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        for (name, schema) in [
            (OpenDays::name(), OpenDays::schema()),
            (CalendarYears::name(), CalendarYears::schema()),
        ] {
            schemas.push((name.into(), schema));
        }
    }
}

/// The whole calendar: exactly these open days.
// Form A of `CalendarChange`, for its schema only.
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
pub struct OpenDays {
    /// 1 to 20000 distinct real dates (`YYYYMMDD`) in 1990-2100
    #[schema(min_items = 1, max_items = 20000)]
    pub open_days: Vec<String>,
}

/// 1 January `from_year` to 31 December `to_year` rebuilt: every day not on a `weekend`
/// day and not a holiday is open.
// Form B of `CalendarChange`, for its schema only.
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
pub struct CalendarYears {
    #[schema(minimum = 1990, maximum = 2100)]
    pub from_year: i64,
    /// the span from `from_year` to `to_year`, both included, is at most 50 years
    #[schema(minimum = 1990, maximum = 2100)]
    pub to_year: i64,
    /// closed days inside the span (`YYYYMMDD`)
    pub holidays: Option<Vec<String>>,
    /// closed days of the week (`mon` ... `sun`); default `["sat", "sun"]`
    pub weekend: Option<Vec<String>>,
}

/// A checked change: what the calendar (or a span of it) becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CalendarPlan {
    /// The whole calendar becomes exactly `open` (sorted, distinct, not empty).
    Whole { open: Vec<NaiveDate> },
    /// Days `from..=to` become exactly `open` (sorted, within the span, possibly
    /// empty); days outside the span are kept.
    Span {
        from: NaiveDate,
        to: NaiveDate,
        open: Vec<NaiveDate>,
    },
}

impl CalendarPlan {
    /// The days the plan replaces: `None` for the whole calendar.
    pub(super) fn span(&self) -> Option<(NaiveDate, NaiveDate)> {
        match self {
            CalendarPlan::Whole { .. } => None,
            CalendarPlan::Span { from, to, .. } => Some((*from, *to)),
        }
    }

    pub(super) fn open(&self) -> &[NaiveDate] {
        match self {
            CalendarPlan::Whole { open } | CalendarPlan::Span { open, .. } => open,
        }
    }
}

/// The answer: the whole calendar after the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CalendarSummary {
    /// Open days in the whole calendar.
    pub open_days: i64,
    /// the first open day (`YYYYMMDD`); null when the calendar is empty
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub first: Option<String>,
    /// the last open day (`YYYYMMDD`); null when the calendar is empty
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub last: Option<String>,
}

impl CalendarChange {
    /// Checks the body (no database) and says what the calendar becomes.
    pub fn plan(self) -> Result<CalendarPlan, ApiError> {
        let range_fields: Vec<&str> = [
            ("from_year", self.from_year.is_some()),
            ("to_year", self.to_year.is_some()),
            ("holidays", self.holidays.is_some()),
            ("weekend", self.weekend.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect();
        match (self.open_days, range_fields.first()) {
            (Some(_), Some(other)) => Err(ApiError::invalid(format!(
                "send either open_days or a year range (from_year, to_year, holidays, \
                 weekend), not both: found open_days and {other}"
            ))),
            (Some(days), None) => whole(&days),
            (None, Some(_)) => span(
                self.from_year,
                self.to_year,
                self.holidays.unwrap_or_default(),
                self.weekend,
            ),
            (None, None) => Err(ApiError::invalid(
                "send open_days (a list of YYYYMMDD dates), or from_year and to_year \
                 (with optional holidays and weekend)",
            )),
        }
    }
}

fn whole(days: &[String]) -> Result<CalendarPlan, ApiError> {
    if days.is_empty() {
        return Err(ApiError::invalid(
            "open_days must hold at least one day; a calendar without open days hides all data",
        ));
    }
    if days.len() > MAX_OPEN_DAYS {
        return Err(ApiError::invalid(format!(
            "open_days holds {} days; at most {MAX_OPEN_DAYS} at a time (use a year range \
             for long spans)",
            days.len()
        )));
    }
    let mut open = BTreeSet::new();
    for (i, text) in days.iter().enumerate() {
        let day = date_in_range("open_days", i, text)?;
        if !open.insert(day) {
            return Err(ApiError::invalid(format!(
                "open_days[{i}]: '{text}' is listed more than once"
            )));
        }
    }
    Ok(CalendarPlan::Whole {
        open: open.into_iter().collect(),
    })
}

fn span(
    from_year: Option<i64>,
    to_year: Option<i64>,
    holidays: Vec<String>,
    weekend: Option<Vec<String>>,
) -> Result<CalendarPlan, ApiError> {
    let from_year = year("from_year", from_year)?;
    let to_year = year("to_year", to_year)?;
    if from_year > to_year {
        return Err(ApiError::invalid(format!(
            "from_year {from_year} is after to_year {to_year}"
        )));
    }
    if to_year - from_year + 1 > MAX_SPAN_YEARS {
        return Err(ApiError::invalid(format!(
            "from_year {from_year} to to_year {to_year} is {} years; at most {MAX_SPAN_YEARS} \
             at a time",
            to_year - from_year + 1
        )));
    }
    let from = NaiveDate::from_ymd_opt(from_year, 1, 1).expect("checked year");
    let to = NaiveDate::from_ymd_opt(to_year, 12, 31).expect("checked year");

    let weekend = weekend_days(weekend)?;
    let mut closed = BTreeSet::new();
    for (i, text) in holidays.iter().enumerate() {
        let day = date("holidays", i, text)?;
        if day < from || day > to {
            return Err(ApiError::invalid(format!(
                "holidays[{i}]: '{text}' is outside {from_year}..{to_year} (from_year to to_year)"
            )));
        }
        if !closed.insert(day) {
            return Err(ApiError::invalid(format!(
                "holidays[{i}]: '{text}' is listed more than once"
            )));
        }
    }
    let open = from
        .iter_days()
        .take_while(|d| *d <= to)
        .filter(|d| !weekend.contains(&d.weekday()) && !closed.contains(d))
        .collect();
    Ok(CalendarPlan::Span { from, to, open })
}

fn year(field: &str, value: Option<i64>) -> Result<i32, ApiError> {
    let value = value.ok_or_else(|| {
        ApiError::invalid(format!(
            "{field} is required with a year range (from_year and to_year)"
        ))
    })?;
    i32::try_from(value)
        .ok()
        .filter(|y| (MIN_YEAR..=MAX_YEAR).contains(y))
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "{field} must be a year from {MIN_YEAR} to {MAX_YEAR}, not {value}"
            ))
        })
}

fn weekend_days(names: Option<Vec<String>>) -> Result<Vec<Weekday>, ApiError> {
    let Some(names) = names else {
        return Ok(vec![Weekday::Sat, Weekday::Sun]);
    };
    let mut days = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let day = DAY_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| *d)
            .ok_or_else(|| {
                ApiError::invalid(format!(
                    "weekend[{i}]: '{name}' is not a day name; use mon, tue, wed, thu, fri, \
                     sat or sun"
                ))
            })?;
        if days.contains(&day) {
            return Err(ApiError::invalid(format!(
                "weekend[{i}]: '{name}' is listed more than once"
            )));
        }
        days.push(day);
    }
    // A week with no open day is almost certainly a mistake, and would silently close
    // whole years; closing a span on purpose is done with a list (form A).
    if days.len() == DAY_NAMES.len() {
        return Err(ApiError::invalid(
            "weekend names every day of the week; at least one day must stay open",
        ));
    }
    Ok(days)
}

/// `field[i]` as a date in the years a calendar may hold.
fn date_in_range(field: &str, i: usize, text: &str) -> Result<NaiveDate, ApiError> {
    let day = date(field, i, text)?;
    if !(MIN_YEAR..=MAX_YEAR).contains(&day.year()) {
        return Err(ApiError::invalid(format!(
            "{field}[{i}]: '{text}' is outside the years {MIN_YEAR} to {MAX_YEAR}"
        )));
    }
    Ok(day)
}

/// `YYYYMMDD` and nothing else.
fn date(field: &str, i: usize, text: &str) -> Result<NaiveDate, ApiError> {
    WireDate::parse_compact(text)
        .map(|d| d.0)
        .map_err(|e| match e {
            DateError::Shape => ApiError::invalid(format!(
                "{field}[{i}]: '{text}' is not a date in YYYYMMDD form"
            )),
            DateError::NotReal => {
                ApiError::invalid(format!("{field}[{i}]: '{text}' is not a real date"))
            }
        })
}

#[cfg(test)]
mod tests;
