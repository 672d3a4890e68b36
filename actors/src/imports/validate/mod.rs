//! The D8 rules, all-or-nothing: rows of cells to quote rows, or every bad row.
//!
//! [`Validator`] takes the file's rows one at a time as they are read: the header
//! first, then every cell of every data row, and the rules across rows (no duplicate
//! date/index/specification; each day's weights of an index sum to exactly 1). It
//! hands back each valid row's quote at once (an import stores them while it still
//! reads) and at [`Validator::finish`] says whether the whole file is good or lists
//! the problems, each with the row number the spreadsheet shows, the column name and
//! a reason a business user can act on.
//!
//! Its share of the D8 bounds (quoted in [`super::bounds`]):
//! - the problems listed are the first [`MAX_LISTED_ERRORS`] in row order, kept by an
//!   [`ErrorList`]; [`Rejection::total`] counts them all;
//! - a cell longer than [`MAX_CELL_CHARS`] characters, in any column, header included,
//!   is an error of its row whose reason quotes at most its first 50;
//! - a cell holding NUL, the one character a PostgreSQL `text` in a UTF-8 database
//!   cannot store (a Rust string holds nothing else it refuses), is an error of its row,
//!   so no quote carrying one reaches the `COPY`;
//! - every reason that quotes a value from the file quotes it through [`echo`].
//!
//! The rules live in one file each: [`header`] (where each D8 column is), [`row`] (one
//! data row's cells, and the bounds of any cell), [`columns`] (a date, an index code, a
//! specification), [`amounts`] (a weight, a price) and [`across_rows`] (duplicates and
//! weight sums). This file holds what they share and the [`Validator`] that runs them.
//!
//! This module must never:
//! - use binary floating point: weights and prices are parsed from their decimal text
//!   straight into `Decimal`, and the sums are exact;
//! - alter a specification name (no trimming, no case folding: it is an identifier the
//!   user chose, Unicode included);
//! - stop at the first problem: the user fixes the whole file in one go (the first
//!   1,000 are listed, and the total counted);
//! - panic on any input.

mod across_rows;
mod amounts;
mod cells;
mod columns;
mod header;
mod row;

use std::collections::BTreeSet;

use self::across_rows::AcrossRows;
use self::cells::EXPECTED_HEADER;
pub use self::cells::{ImportReference, COLUMNS, MAX_SPECIFICATION_CHARS};
use self::header::header_positions;
use self::row::parse_row;
use super::bounds::{column_letter, ErrorList};
#[cfg(doc)]
use super::bounds::{echo, MAX_CELL_CHARS, MAX_LISTED_ERRORS};
use super::workbook::{Cell, SheetRow};
use crate::quotes::recalc::QuoteRow;

/// One problem of a refused file: the error table's own type (`crate::error`), which
/// every answer carrying a 40002 lists.
pub use crate::error::RowError;

/// A refused file's problems: the first ones in row order (at most
/// [`MAX_LISTED_ERRORS`]) and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub errors: Vec<RowError>,
    pub total: usize,
}

impl Rejection {
    fn one(error: RowError) -> Rejection {
        Rejection {
            errors: vec![error],
            total: 1,
        }
    }
}

/// The rules applied row by row, as the rows are read: an import stores each valid row
/// while the rest of the file is still being parsed, and learns only at
/// [`Validator::finish`] whether the whole file is good (a weight sum or a column with
/// no name can only be judged at the end).
pub struct Validator<'r> {
    reference: &'r ImportReference,
    header: Option<Header>,
    /// Data rows seen (header excluded).
    rows: usize,
    errors: ErrorList,
    across: AcrossRows<'r>,
}

/// The header row: where each D8 column is, or what is wrong with it.
struct Header {
    number: u32,
    cells: Vec<Cell>,
    positions: Result<[usize; 5], Vec<RowError>>,
    /// Columns without a header name that hold a value in some data row.
    unnamed_with_values: BTreeSet<usize>,
}

impl<'r> Validator<'r> {
    pub fn new(reference: &'r ImportReference) -> Self {
        Validator {
            reference,
            header: None,
            rows: 0,
            errors: ErrorList::default(),
            across: AcrossRows::default(),
        }
    }

    /// Checks the next row of the file (the first is the header): its quote when every
    /// cell of it is valid. A valid row may still be refused at [`Validator::finish`]
    /// by a rule across rows; [`Validator::is_clean`] says whether any problem has been
    /// found so far.
    pub fn row(&mut self, row: &SheetRow) -> Option<QuoteRow> {
        let Some(header) = &mut self.header else {
            self.header = Some(Header {
                number: row.number,
                cells: row.cells.clone(),
                positions: header_positions(row),
                unnamed_with_values: BTreeSet::new(),
            });
            return None;
        };
        self.rows += 1;
        // A column with values but no name is an extra column too; a trailing empty
        // column (a stray separator, a formatted but empty cell) is harmless.
        for (i, cell) in row.cells.iter().enumerate() {
            let unnamed = header.cells.get(i).is_none_or(|h| matches!(h, Cell::Empty));
            if unnamed && !matches!(cell, Cell::Empty) {
                header.unnamed_with_values.insert(i);
            }
        }
        // With a bad header the data rows are left alone: their cells cannot be told
        // apart, and the header's errors say what to fix.
        let Ok(positions) = &header.positions else {
            return None;
        };
        let parsed = parse_row(row, positions, self.reference, &mut self.errors);
        self.across.add(&parsed, &mut self.errors);
        parsed.into_quote()
    }

    /// No problem found in the rows so far.
    pub fn is_clean(&self) -> bool {
        self.errors.is_empty()
            && self.header.as_ref().is_none_or(|h| {
                h.positions
                    .as_ref()
                    .is_ok_and(|_| h.unnamed_with_values.is_empty())
            })
    }

    /// Data rows seen (header excluded).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// After the last row: the number of quotes when the whole file is good, otherwise
    /// its problems, the first in row order listed.
    pub fn finish(mut self) -> Result<usize, Rejection> {
        let Some(header) = self.header else {
            return Err(Rejection::one(RowError {
                row: 1,
                column: String::new(),
                reason: format!(
                    "the file is empty: expected a header row {EXPECTED_HEADER} and at least \
                     one quote"
                ),
            }));
        };
        let mut header_errors = ErrorList::default();
        for error in header.positions.err().unwrap_or_default() {
            header_errors.add(rank(&error.column), error);
        }
        for i in header.unnamed_with_values {
            header_errors.add(
                rank(""),
                RowError {
                    row: header.number,
                    column: String::new(),
                    reason: format!(
                        "column {} holds values but has no header name; the only columns \
                         allowed are {EXPECTED_HEADER}",
                        column_letter(i as u64)
                    ),
                },
            );
        }
        if !header_errors.is_empty() {
            return Err(rejection(header_errors));
        }
        if self.rows == 0 {
            return Err(Rejection::one(RowError {
                row: header.number.saturating_add(1),
                column: String::new(),
                reason: "no quotes below the header".to_owned(),
            }));
        }
        self.across.finish(&mut self.errors);
        if self.errors.is_empty() {
            Ok(self.rows)
        } else {
            Err(rejection(self.errors))
        }
    }
}

fn rejection(errors: ErrorList) -> Rejection {
    let (errors, total) = errors.into_sorted();
    Rejection { errors, total }
}

/// Where errors of `column` sort within a row: the D8 column order, other columns
/// after (and among those, the order found).
fn rank(column: &str) -> usize {
    COLUMNS
        .iter()
        .position(|c| *c == column)
        .unwrap_or(COLUMNS.len())
}

#[cfg(test)]
mod tests;
