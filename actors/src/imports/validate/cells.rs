//! The D8 columns of a quote file, what its rules check against (the [`ImportReference`]),
//! and the words a refusal uses for a cell: what every rule of `validate` shares. It
//! must never check a rule itself (that is `row`, `header` and `across_rows`).

use std::collections::BTreeSet;

use chrono::NaiveDate;

use crate::imports::bounds::echo;
use crate::imports::workbook::Cell;

/// What the rules check against: the database's state at import time.
#[derive(Debug, Clone, Default)]
pub struct ImportReference {
    /// Known index codes that bear quotes (every index but the composite).
    pub quote_indexes: BTreeSet<String>,
    pub open_days: BTreeSet<NaiveDate>,
    /// Indexes calculated from others (the composite): a quote for one is a mistake
    /// worth naming.
    pub calculated_indexes: BTreeSet<String>,
    /// The service's today (D5): a later date is a row error (D26).
    pub today: NaiveDate,
}

/// The D8 columns; errors are sorted by this order within a row.
pub const COLUMNS: [&str; 5] = [
    "trade_date",
    "index_code",
    "specification",
    "weight",
    "price",
];
pub(super) const TRADE_DATE: usize = 0;
pub(super) const INDEX_CODE: usize = 1;
pub(super) const SPECIFICATION: usize = 2;
pub(super) const WEIGHT: usize = 3;
pub(super) const PRICE: usize = 4;

/// Longest specification name, in characters (not bytes).
pub const MAX_SPECIFICATION_CHARS: usize = 200;

pub(super) const EXPECTED_HEADER: &str = "trade_date, index_code, specification, weight, price";

/// The reason for an empty cell.
pub(super) const MISSING: &str = "missing";

pub(super) fn trim_ascii(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// The reason for a cell of the wrong kind.
pub(super) fn holds(cell: &Cell, expected: &str) -> String {
    match cell {
        Cell::Empty => MISSING.to_owned(),
        Cell::Invalid(what) => format!("the cell holds {what}; expected {expected}"),
        other => format!("the cell holds {}; expected {expected}", describe(other)),
    }
}

/// What a cell holds, as a noun phrase: how a refusal names it.
pub(super) fn describe(cell: &Cell) -> String {
    match cell {
        Cell::Empty => "nothing".to_owned(),
        Cell::Text(s) => format!("the text '{}'", echo(s)),
        Cell::Number(s) => format!("the number {}", echo(s)),
        Cell::Date(d) => format!("the date {}", d.format("%Y-%m-%d")),
        Cell::Invalid(what) => what.clone(),
        Cell::OutOfBounds { shown, .. } => format!("the text '{shown}'"),
    }
}

/// Why a cell breaks the D8 bounds of any cell, if it does: "a cell longer than 500
/// characters is an error whose reason quotes at most its first 50; a cell holding NUL
/// or a character PostgreSQL cannot store is an error of its row". The reader judged
/// the text as it took it from the file ([`crate::imports::bounds::text_bound`]); a cell past a bound holds
/// the reason instead of the text.
pub(super) fn out_of_bounds(cell: &Cell) -> Option<String> {
    match cell {
        Cell::OutOfBounds { reason, .. } => Some(reason.clone()),
        _ => None,
    }
}
