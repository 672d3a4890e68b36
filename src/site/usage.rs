//! API calls per UTC day as the website shows them, a chart and a table: on a member's
//! own usage page and on a user's page in the back office, which must read the same.

use iq_actors::accounts::usage::DayUsage;

use super::chart::{self, FULL};
use super::format::{long_date, parse_wire};

/// A day as a row of the table.
pub struct UsageDay {
    pub date_long: String,
    pub date_wire: String,
    pub calls: i64,
}

/// The chart of `days` (newest first, as the service gives them), oldest on the left;
/// empty when there is nothing to draw.
pub fn chart(days: &[DayUsage]) -> String {
    let mut series: Vec<_> = days
        .iter()
        .filter_map(|d| parse_wire(&d.date).map(|date| (date, d.calls.to_string())))
        .collect();
    series.reverse();
    chart::line(&series, FULL, "API calls per day").unwrap_or_default()
}

/// `days` as rows of the table, in the order given; a day whose date does not read is
/// left out, as the chart leaves it out.
pub fn rows(days: &[DayUsage]) -> Vec<UsageDay> {
    days.iter()
        .filter_map(|d| {
            parse_wire(&d.date).map(|date| UsageDay {
                date_long: long_date(date),
                date_wire: d.date.clone(),
                calls: d.calls,
            })
        })
        .collect()
}
