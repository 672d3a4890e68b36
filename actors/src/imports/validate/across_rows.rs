//! The rules across rows, fed one row at a time: no duplicate (date, index,
//! specification), and each (date, index) group's weights sum to exactly 1.
//!
//! Both run on every cell that could be read, whatever else is wrong with its row, so
//! one upload lists every problem the file has: a row with a bad price still counts
//! in its group's sum and its specification in the duplicate check. A group is not
//! summed only when one of its weights cannot be read (that cell's error says what to
//! fix, and any sum would be a guess); a duplicate row's weight is left out of the sum,
//! which is then the sum of the file once the duplicate is removed. It must never
//! judge a sum before the last row.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::cells::{COLUMNS, SPECIFICATION, WEIGHT};
use super::row::Parsed;
use super::RowError;
use crate::imports::bounds::ErrorList;

/// How many row numbers a weight-sum reason lists before "and N more".
const LISTED_ROWS: usize = 10;

/// One (date, index) group of the weight-sum rule.
struct Group {
    /// The rows whose weights are summed, in file order.
    rows: Vec<u32>,
    sum: Decimal,
    /// A weight of the group cannot be read: its error already says what to fix, and
    /// a sum without it would be a guess.
    skip: bool,
    /// The row each specification was first seen on (ordered: a few short strings
    /// compare faster than they hash).
    first_seen: BTreeMap<String, u32>,
}

/// The rules across rows, fed one row at a time: no duplicate (date, index,
/// specification), and each (date, index) group's weights sum to exactly 1.
#[derive(Default)]
pub(super) struct AcrossRows<'r> {
    /// Each group's place in `groups`.
    places: HashMap<(NaiveDate, &'r str), usize>,
    /// Groups in the order their first row came, so the sum errors are stable.
    groups: Vec<((NaiveDate, &'r str), Group)>,
    /// The last row's group: files list a group's rows together, so most rows need no
    /// lookup at all.
    last: Option<usize>,
}

impl<'r> AcrossRows<'r> {
    pub(super) fn add(&mut self, row: &Parsed<'r>, errors: &mut ErrorList) {
        let Some(key) = row.group else {
            return;
        };
        let place = match self.last {
            Some(place) if self.groups[place].0 == key => place,
            _ => *self.places.entry(key).or_insert_with(|| {
                self.groups.push((
                    key,
                    Group {
                        rows: Vec::new(),
                        sum: Decimal::ZERO,
                        skip: false,
                        first_seen: BTreeMap::new(),
                    },
                ));
                self.groups.len() - 1
            }),
        };
        self.last = Some(place);
        let group = &mut self.groups[place].1;
        if let Some(specification) = &row.specification {
            if let Some(first) = group.first_seen.get(specification) {
                errors.add_with(row.number, SPECIFICATION, || RowError {
                    row: row.number,
                    column: COLUMNS[SPECIFICATION].to_owned(),
                    reason: format!(
                        "duplicate of row {first}: the same trade_date, index_code and \
                         specification appear there"
                    ),
                });
                return;
            }
            group.first_seen.insert(specification.clone(), row.number);
        }
        match row.weight {
            Some(weight) => {
                group.rows.push(row.number);
                // Weights are at most 1 each, so the sum cannot overflow; checked anyway.
                group.sum = group.sum.checked_add(weight).unwrap_or(Decimal::MAX);
            }
            None => group.skip = true,
        }
    }

    /// The weight-sum errors, once every row is in. They belong to rows anywhere in the
    /// file, so each is offered to the list; a group's reason is written only if one of
    /// its rows is listed.
    pub(super) fn finish(self, errors: &mut ErrorList) {
        for (key, group) in self.groups {
            if group.skip || group.sum == Decimal::ONE {
                continue;
            }
            let mut reason: Option<String> = None;
            for &number in &group.rows {
                errors.add_with(number, WEIGHT, || RowError {
                    row: number,
                    column: COLUMNS[WEIGHT].to_owned(),
                    reason: reason
                        .get_or_insert_with(|| weight_sum_reason(key, &group))
                        .clone(),
                });
            }
        }
    }
}

fn weight_sum_reason((date, index): (NaiveDate, &str), group: &Group) -> String {
    let mut listed = group
        .rows
        .iter()
        .take(LISTED_ROWS)
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if group.rows.len() > LISTED_ROWS {
        listed.push_str(&format!(" and {} more", group.rows.len() - LISTED_ROWS));
    }
    format!(
        "weights of {index} on {} sum to {} (rows {listed}), not 1",
        date.format("%Y-%m-%d"),
        group.sum.normalize()
    )
}
