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
//! This module must never:
//! - use binary floating point: weights and prices are parsed from their decimal text
//!   straight into `Decimal`, and the sums are exact;
//! - alter a specification name (no trimming, no case folding: it is an identifier the
//!   user chose, Unicode included);
//! - stop at the first problem: the user fixes the whole file in one go (the first
//!   1,000 are listed, and the total counted);
//! - panic on any input.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde::Serialize;

#[cfg(doc)]
use super::bounds::MAX_LISTED_ERRORS;
use super::bounds::{column_letter, echo, ErrorList, MAX_CELL_CHARS};
#[cfg(test)]
use super::workbook::Sheet;
use super::workbook::{Cell, SheetRow};
use crate::quotes::recalc::QuoteRow;

/// One problem, as the `errors` array of a 422 / 40002 lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowError {
    /// As the spreadsheet shows it: the header is row 1.
    pub row: u32,
    /// The column's header name (`trade_date`, `index_code`, ...).
    pub column: String,
    pub reason: String,
}

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

/// What the rules check against: the database's state at import time.
#[derive(Debug, Clone, Default)]
pub struct Reference {
    /// Known index codes that bear quotes (every index but `Hardware_Index`).
    pub quote_indexes: BTreeSet<String>,
    pub open_days: BTreeSet<NaiveDate>,
}

/// The D8 columns; errors are sorted by this order within a row.
pub const COLUMNS: [&str; 5] = [
    "trade_date",
    "index_code",
    "specification",
    "weight",
    "price",
];
const TRADE_DATE: usize = 0;
const INDEX_CODE: usize = 1;
const SPECIFICATION: usize = 2;
const WEIGHT: usize = 3;
const PRICE: usize = 4;

/// The index derived from the others; a quote for it is a mistake worth naming.
const CALCULATED_INDEX: &str = "Hardware_Index";
/// Longest specification name, in characters (not bytes).
pub const MAX_SPECIFICATION_CHARS: usize = 200;
const WEIGHT_PLACES: usize = 8;
const PRICE_PLACES: usize = 6;
/// `numeric(24,6)`: 18 digits before the decimal point.
const PRICE_INTEGER_DIGITS: usize = 18;
/// How many row numbers a weight-sum reason lists before "and N more".
const LISTED_ROWS: usize = 10;

const EXPECTED_HEADER: &str = "trade_date, index_code, specification, weight, price";

/// A whole sheet at once (for tests): every row valid gives the quote rows in file
/// order, otherwise the problems listed.
#[cfg(test)]
pub fn validate(sheet: &Sheet, reference: &Reference) -> Result<Vec<QuoteRow>, Vec<RowError>> {
    let mut validator = Validator::new(reference);
    let quotes: Vec<QuoteRow> = sheet
        .rows
        .iter()
        .filter_map(|row| validator.row(row))
        .collect();
    validator
        .finish()
        .map(|_| quotes)
        .map_err(|rejection| rejection.errors)
}

/// The rules applied row by row, as the rows are read: an import stores each valid row
/// while the rest of the file is still being parsed, and learns only at
/// [`Validator::finish`] whether the whole file is good (a weight sum or a column with
/// no name can only be judged at the end).
pub struct Validator<'r> {
    reference: &'r Reference,
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
    pub fn new(reference: &'r Reference) -> Self {
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
        parsed.quote
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

// ---------------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------------

/// Where each D8 column is (`positions[TRADE_DATE]` is the cell index of trade_date),
/// or every problem of the header row itself (unnamed columns with values are found
/// in the data rows, by [`Validator::row`]).
fn header_positions(header: &SheetRow) -> Result<[usize; 5], Vec<RowError>> {
    let row = header.number;
    let mut found: [Option<usize>; 5] = [None; 5];
    let mut errors = Vec::new();
    let error = |column: String, reason: String| RowError {
        row,
        column,
        reason,
    };

    for (i, cell) in header.cells.iter().enumerate() {
        if let Some(problem) = out_of_bounds(cell) {
            errors.push(error(
                cell_display(cell),
                format!(
                    "the header cell in column {}: {problem}",
                    column_letter(i as u64)
                ),
            ));
            continue;
        }
        let name = match cell {
            Cell::Empty => continue,
            Cell::Text(name) => name,
            other => {
                errors.push(error(
                    cell_display(other),
                    format!(
                        "the header cell in column {} holds {}; header cells must be the \
                         column names {EXPECTED_HEADER}",
                        column_letter(i as u64),
                        describe(other)
                    ),
                ));
                continue;
            }
        };
        let key = name.trim_matches(|c: char| c.is_ascii_whitespace());
        match COLUMNS.iter().position(|c| c.eq_ignore_ascii_case(key)) {
            Some(k) => match found[k] {
                Some(first) => errors.push(error(
                    echo(name).into_owned(),
                    format!(
                        "column {} appears twice (columns {} and {})",
                        COLUMNS[k],
                        column_letter(first as u64),
                        column_letter(i as u64)
                    ),
                )),
                None => found[k] = Some(i),
            },
            None => errors.push(error(
                echo(name).into_owned(),
                format!(
                    "unknown column '{}' (column {}); the only columns allowed are \
                     {EXPECTED_HEADER}, in any order",
                    echo(name),
                    column_letter(i as u64)
                ),
            )),
        }
    }

    for (k, position) in found.iter().enumerate() {
        if position.is_none() {
            errors.push(error(
                COLUMNS[k].to_owned(),
                format!(
                    "missing column {}; the header must name {EXPECTED_HEADER}",
                    COLUMNS[k]
                ),
            ));
        }
    }

    match found {
        [Some(a), Some(b), Some(c), Some(d), Some(e)] if errors.is_empty() => Ok([a, b, c, d, e]),
        _ => Err(errors),
    }
}

/// A cell's value as an error's `column` names an offending header cell: cut by
/// [`echo`], so a long cell is not copied whole.
fn cell_display(cell: &Cell) -> String {
    match cell {
        Cell::Empty | Cell::Invalid(_) => String::new(),
        Cell::Text(s) | Cell::Number(s) => echo(s).into_owned(),
        Cell::Date(d) => d.format("%Y-%m-%d").to_string(),
    }
}

/// What a cell holds, as a noun phrase.
fn describe(cell: &Cell) -> String {
    match cell {
        Cell::Empty => "nothing".to_owned(),
        Cell::Text(s) => format!("the text '{}'", echo(s)),
        Cell::Number(s) => format!("the number {}", echo(s)),
        Cell::Date(d) => format!("the date {}", d.format("%Y-%m-%d")),
        Cell::Invalid(what) => what.clone(),
    }
}

// ---------------------------------------------------------------------------------
// One row
// ---------------------------------------------------------------------------------

/// One data row after its own checks.
struct Parsed<'r> {
    number: u32,
    /// Every cell of the row valid.
    quote: Option<QuoteRow>,
    /// The row's date and index, when both are valid: the weight-sum group it belongs
    /// to, even if another of its cells is bad.
    group: Option<(NaiveDate, &'r str)>,
}

const MISSING: &str = "missing";
static EMPTY: Cell = Cell::Empty;

fn parse_row<'r>(
    row: &SheetRow,
    positions: &[usize; 5],
    reference: &'r Reference,
    errors: &mut ErrorList,
) -> Parsed<'r> {
    let cell = |k: usize| row.cells.get(positions[k]).unwrap_or(&EMPTY);
    // `k`, the column's place in the D8 order, is also its rank within the row; the
    // error is built only if it is listed.
    let mut report = |k: usize, reason: String| {
        errors.add_with(row.number, k, || RowError {
            row: row.number,
            column: COLUMNS[k].to_owned(),
            reason,
        })
    };
    // The bounds of any cell come first: a 600-character or NUL-holding cell is that
    // problem, whatever else is wrong with it.
    let bounded = |k: usize| match out_of_bounds(cell(k)) {
        Some(problem) => Err(problem),
        None => Ok(cell(k)),
    };

    let trade_date = bounded(TRADE_DATE).and_then(|c| trade_date(c, &reference.open_days));
    let index_code = bounded(INDEX_CODE).and_then(|c| index_code(c, &reference.quote_indexes));
    let specification = bounded(SPECIFICATION).and_then(specification);
    let weight = bounded(WEIGHT).and_then(weight);
    let price = bounded(PRICE).and_then(price);

    let group = match (&trade_date, &index_code) {
        (Ok(date), Ok(code)) => Some((*date, *code)),
        _ => None,
    };
    let quote = match (trade_date, index_code, specification, weight, price) {
        (Ok(trade_date), Ok(index_code), Ok(specification), Ok(weight), Ok(price)) => {
            Some(QuoteRow {
                trade_date,
                index_code: index_code.to_owned(),
                specification,
                weight,
                price,
            })
        }
        (trade_date, index_code, specification, weight, price) => {
            for (k, problem) in [
                trade_date.err(),
                index_code.err(),
                specification.err(),
                weight.err(),
                price.err(),
            ]
            .into_iter()
            .enumerate()
            {
                if let Some(reason) = problem {
                    report(k, reason);
                }
            }
            None
        }
    };
    Parsed {
        number: row.number,
        quote,
        group,
    }
}

/// Why a cell breaks the D8 bounds of any cell, if it does: "a cell longer than 500
/// characters is an error whose reason quotes at most its first 50; a cell holding NUL
/// or a character PostgreSQL cannot store is an error of its row". In a UTF-8 database
/// `text` stores every character but NUL, and a Rust string holds only characters, so
/// NUL is the one to refuse; the COPY would otherwise fail the whole import (50000).
fn out_of_bounds(cell: &Cell) -> Option<String> {
    let (Cell::Text(s) | Cell::Number(s)) = cell else {
        return None;
    };
    // A string of at most 500 bytes has at most 500 characters: counting them is only
    // needed past that.
    if s.len() > MAX_CELL_CHARS {
        let length = s.chars().count();
        if length > MAX_CELL_CHARS {
            return Some(format!(
                "the cell holds {length} characters, more than the {MAX_CELL_CHARS} a cell \
                 may hold: '{}'",
                echo(s)
            ));
        }
    }
    if s.as_bytes().contains(&0) {
        return Some(
            "the cell holds a NUL character (code 0), which cannot be stored: remove it".to_owned(),
        );
    }
    None
}

fn trim_ascii(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// The reason for a cell of the wrong kind.
fn holds(cell: &Cell, expected: &str) -> String {
    match cell {
        Cell::Empty => MISSING.to_owned(),
        Cell::Invalid(what) => format!("the cell holds {what}; expected {expected}"),
        other => format!("the cell holds {}; expected {expected}", describe(other)),
    }
}

const DATE_FORMS: &str = "a date (YYYYMMDD or YYYY-MM-DD)";

fn trade_date(cell: &Cell, open_days: &BTreeSet<NaiveDate>) -> Result<NaiveDate, String> {
    let date = match cell {
        Cell::Date(date) => *date,
        Cell::Text(s) => {
            let s = trim_ascii(s);
            if s.is_empty() {
                return Err(MISSING.to_owned());
            }
            date_text(s)?
        }
        // A General-formatted cell holding 20261120 is a number, and means the date.
        Cell::Number(s) if s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()) => date_text(s)?,
        Cell::Number(s) => {
            return Err(format!(
                "{} is a number, not a date: format the cell as a date or write the date as \
                 YYYYMMDD or YYYY-MM-DD",
                echo(s)
            ))
        }
        other => return Err(holds(other, DATE_FORMS)),
    };
    if open_days.contains(&date) {
        Ok(date)
    } else {
        Err(format!(
            "{} is not an open trading day",
            date.format("%Y-%m-%d")
        ))
    }
}

/// `YYYYMMDD` or `YYYY-MM-DD`, exactly, and a real calendar date.
fn date_text(s: &str) -> Result<NaiveDate, String> {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        if part.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(part).ok()?.parse().ok()
        } else {
            None
        }
    };
    let parts = match b.len() {
        8 => (digits(0..4), digits(4..6), digits(6..8)),
        10 if b[4] == b'-' && b[7] == b'-' => (digits(0..4), digits(5..7), digits(8..10)),
        _ => (None, None, None),
    };
    let (Some(year), Some(month), Some(day)) = parts else {
        return Err(format!(
            "'{}' is not a date in the form YYYYMMDD or YYYY-MM-DD",
            echo(s)
        ));
    };
    i32::try_from(year)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, month, day))
        .ok_or_else(|| format!("'{}' is not a real calendar date", echo(s)))
}

fn index_code<'r>(cell: &Cell, quote_indexes: &'r BTreeSet<String>) -> Result<&'r str, String> {
    let code = match cell {
        Cell::Text(s) | Cell::Number(s) => trim_ascii(s),
        other => return Err(holds(other, "an index code")),
    };
    if code.is_empty() {
        return Err(MISSING.to_owned());
    }
    // Borrowing the code from the reference set avoids one allocation per row.
    if let Some(known) = quote_indexes.get(code) {
        return Ok(known.as_str());
    }
    if code == CALCULATED_INDEX {
        return Err(format!(
            "{CALCULATED_INDEX} is calculated from the base indexes and takes no quotes"
        ));
    }
    // Index codes are case-sensitive identifiers; a near miss deserves a hint.
    match quote_indexes
        .iter()
        .find(|known| known.eq_ignore_ascii_case(code))
    {
        Some(known) => Err(format!(
            "unknown index code '{}' (did you mean '{known}'? index codes are \
             case-sensitive)",
            echo(code)
        )),
        None => Err(format!("unknown index code '{}'", echo(code))),
    }
}

fn specification(cell: &Cell) -> Result<String, String> {
    let name = match cell {
        Cell::Text(s) | Cell::Number(s) => s,
        other => return Err(holds(other, "a specification name")),
    };
    if name.is_empty() {
        return Err(MISSING.to_owned());
    }
    if name.chars().all(char::is_whitespace) {
        return Err("the specification is blank (only spaces)".to_owned());
    }
    let length = name.chars().count();
    if length > MAX_SPECIFICATION_CHARS {
        return Err(format!(
            "the specification is {length} characters long; at most \
             {MAX_SPECIFICATION_CHARS} are allowed"
        ));
    }
    Ok(name.clone())
}

fn weight(cell: &Cell) -> Result<Decimal, String> {
    let (text, number) = amount(cell, "a weight")?;
    if number.is_zero() || number.negative {
        return Err(format!(
            "the weight must be greater than 0, found {}",
            echo(text)
        ));
    }
    let above_one = match number.integer {
        "" => false,
        "1" => !number.fraction.is_empty(),
        _ => true,
    };
    if above_one {
        return Err(format!(
            "the weight must be at most 1, found {}",
            echo(text)
        ));
    }
    number.to_decimal(text, "weight", WEIGHT_PLACES)
}

fn price(cell: &Cell) -> Result<Decimal, String> {
    let (text, number) = amount(cell, "a price")?;
    if number.is_zero() || number.negative {
        return Err(format!(
            "the price must be greater than 0, found {}",
            echo(text)
        ));
    }
    if number.integer.len() > PRICE_INTEGER_DIGITS {
        return Err(format!(
            "the price {} is too large: at most {PRICE_INTEGER_DIGITS} digits before the \
             decimal point",
            echo(text)
        ));
    }
    number.to_decimal(text, "price", PRICE_PLACES)
}

/// A plain decimal number's parts, without leading integer or trailing fraction zeros
/// (`-007.50` is negative, `7`, `5`): the digit counts the rules need, taken from the
/// text so no conversion can round them.
struct PlainNumber<'t> {
    negative: bool,
    integer: &'t str,
    fraction: &'t str,
}

impl PlainNumber<'_> {
    fn is_zero(&self) -> bool {
        self.integer.is_empty() && self.fraction.is_empty()
    }

    fn to_decimal(&self, text: &str, what: &str, places: usize) -> Result<Decimal, String> {
        if self.fraction.len() > places {
            return Err(format!(
                "the {what} {} has {} decimal places; at most {places} are allowed",
                echo(text),
                self.fraction.len()
            ));
        }
        let out_of_range = || format!("the {what} {} is out of range", echo(text));
        // The digits as one integer and the fraction's length as the scale: exact, and
        // no text to build. 28 digits fit a u128 and a Decimal's 96-bit mantissa is
        // checked by the conversion.
        if self.integer.len() + self.fraction.len() > 28 {
            return Err(out_of_range());
        }
        let mantissa = self
            .integer
            .bytes()
            .chain(self.fraction.bytes())
            .fold(0u128, |m, digit| m * 10 + u128::from(digit - b'0'));
        let signed = i128::try_from(mantissa).map_err(|_| out_of_range())?;
        let signed = if self.negative { -signed } else { signed };
        let scale = u32::try_from(self.fraction.len()).map_err(|_| out_of_range())?;
        Decimal::try_from_i128_with_scale(signed, scale).map_err(|_| out_of_range())
    }
}

/// The text of a weight or price cell and its parts.
fn amount<'c>(cell: &'c Cell, expected: &str) -> Result<(&'c str, PlainNumber<'c>), String> {
    let text = match cell {
        Cell::Text(s) | Cell::Number(s) => trim_ascii(s),
        other => return Err(holds(other, &format!("{expected} (a decimal number)"))),
    };
    if text.is_empty() {
        return Err(MISSING.to_owned());
    }
    plain_number(text).map(|n| (text, n))
}

/// `[+-]digits[.digits]` (either side of the point may be empty, not both).
///
/// Exponent notation is refused: a spreadsheet shows `2.5E+11` for a long number it has
/// rounded for display, and a CSV exported that way has lost the digits.
fn plain_number(text: &str) -> Result<PlainNumber<'_>, String> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (integer, fraction) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let valid = all_digits(integer)
        && all_digits(fraction)
        && (!integer.is_empty() || !fraction.is_empty());
    if !valid {
        let exponent = body.contains(['e', 'E'])
            && body
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        return Err(if exponent {
            format!(
                "'{}' is in exponent notation; write the number out in full (such as \
                 0.001), since exponent notation may mean the spreadsheet rounded it",
                echo(text)
            )
        } else {
            format!(
                "'{}' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
                echo(text)
            )
        });
    }
    Ok(PlainNumber {
        negative,
        integer: integer.trim_start_matches('0'),
        fraction: fraction.trim_end_matches('0'),
    })
}

// ---------------------------------------------------------------------------------
// Across rows
// ---------------------------------------------------------------------------------

/// One (date, index) group of the weight-sum rule.
struct Group {
    /// Row numbers, in file order.
    rows: Vec<u32>,
    sum: Decimal,
    /// A row of the group is bad on its own or a duplicate: its error already says
    /// what to fix, and a sum over a partial group would only add noise.
    skip: bool,
    /// The row each specification was first seen on (ordered: a few short strings
    /// compare faster than they hash).
    first_seen: BTreeMap<String, u32>,
}

/// The rules across rows, fed one row at a time: no duplicate (date, index,
/// specification), and each (date, index) group's weights sum to exactly 1.
#[derive(Default)]
struct AcrossRows<'r> {
    /// Each group's place in `groups`.
    places: HashMap<(NaiveDate, &'r str), usize>,
    /// Groups in the order their first row came, so the sum errors are stable.
    groups: Vec<((NaiveDate, &'r str), Group)>,
    /// The last row's group: files list a group's rows together, so most rows need no
    /// lookup at all.
    last: Option<usize>,
}

impl<'r> AcrossRows<'r> {
    fn add(&mut self, row: &Parsed<'r>, errors: &mut ErrorList) {
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
        group.rows.push(row.number);
        let Some(quote) = &row.quote else {
            group.skip = true;
            return;
        };
        if let Some(first) = group.first_seen.get(&quote.specification) {
            errors.add_with(row.number, SPECIFICATION, || RowError {
                row: row.number,
                column: COLUMNS[SPECIFICATION].to_owned(),
                reason: format!(
                    "duplicate of row {first}: the same trade_date, index_code and \
                     specification appear there"
                ),
            });
            group.skip = true;
            return;
        }
        group
            .first_seen
            .insert(quote.specification.clone(), row.number);
        // Weights are at most 1 each, so the sum cannot overflow; checked anyway.
        group.sum = group.sum.checked_add(quote.weight).unwrap_or(Decimal::MAX);
    }

    /// The weight-sum errors, once every row is in. They belong to rows anywhere in the
    /// file, so each is offered to the list; a group's reason is written only if one of
    /// its rows is listed.
    fn finish(self, errors: &mut ErrorList) {
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

#[cfg(test)]
mod tests {
    use super::super::workbook::{self, FileKind};
    use super::*;
    use std::str::FromStr;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("test date")
    }

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("test decimal")
    }

    struct World {
        reference: Reference,
    }

    impl World {
        fn new() -> Self {
            World {
                reference: Reference {
                    quote_indexes: ["GPU_Index", "Server_Index"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                    // 2026-11-21/22 are a weekend.
                    open_days: ["2026-11-10", "2026-11-19", "2026-11-20", "2026-11-23"]
                        .iter()
                        .map(|s| day(s))
                        .collect(),
                },
            }
        }

        fn reference(&self) -> &Reference {
            &self.reference
        }

        fn csv(&self, text: &str) -> Result<Vec<QuoteRow>, Vec<RowError>> {
            let sheet = workbook::read(FileKind::Csv, text.as_bytes()).expect("readable csv");
            validate(&sheet, self.reference())
        }

        fn errors(&self, text: &str) -> Vec<RowError> {
            self.csv(text).expect_err("should be refused")
        }

        /// (row, column) of each error.
        fn places(&self, text: &str) -> Vec<(u32, String)> {
            self.errors(text)
                .into_iter()
                .map(|e| (e.row, e.column))
                .collect()
        }

        /// The one error of a one-data-row file whose other cells are fine.
        fn reason(&self, text: &str) -> String {
            let errors = self.errors(text);
            assert_eq!(errors.len(), 1, "{errors:?}");
            errors[0].reason.clone()
        }
    }

    fn quote(date: &str, index: &str, spec: &str, weight: &str, price: &str) -> QuoteRow {
        QuoteRow {
            trade_date: day(date),
            index_code: index.to_owned(),
            specification: spec.to_owned(),
            weight: dec(weight),
            price: dec(price),
        }
    }

    fn err(row: u32, column: &str, reason: &str) -> RowError {
        RowError {
            row,
            column: column.to_owned(),
            reason: reason.to_owned(),
        }
    }

    const HEAD: &str = "trade_date,index_code,specification,weight,price\n";

    /// A one-row file with one cell replaced.
    fn one_row(column: usize, value: &str) -> String {
        let mut cells = ["20261120", "GPU_Index", "B200", "1", "250000"];
        cells[column] = value;
        format!("{HEAD}{}\n", cells.join(","))
    }

    fn at(row: u32, column: &str) -> (u32, String) {
        (row, column.to_owned())
    }

    #[test]
    fn a_valid_file_gives_every_quote_in_file_order() {
        let world = World::new();
        let quotes = world
            .csv(&format!(
                "{HEAD}20261120,GPU_Index,B200,0.6,250000.5\n\
                 2026-11-20,GPU_Index,H100,0.4,180000\n\
                 20261120,Server_Index,HGX,1,1.000001\n"
            ))
            .expect("valid");
        assert_eq!(
            quotes,
            vec![
                quote("2026-11-20", "GPU_Index", "B200", "0.6", "250000.5"),
                quote("2026-11-20", "GPU_Index", "H100", "0.4", "180000"),
                quote("2026-11-20", "Server_Index", "HGX", "1", "1.000001"),
            ]
        );
    }

    #[test]
    fn row_by_row_the_validator_says_when_the_file_turns_bad() {
        let world = World::new();
        let rows = |text: &str| {
            workbook::read(FileKind::Csv, text.as_bytes())
                .expect("readable csv")
                .rows
        };
        // Clean until a bad cell; a weight sum is judged only at the end.
        let file = rows(&format!(
            "{HEAD}20261120,GPU_Index,B200,0.5,1\n\
             20261120,Server_Index,HGX,1,1\n\
             20261120,Server_Index,HGX,1,x\n\
             20261120,Server_Index,DGX,1,1\n"
        ));
        let mut validator = Validator::new(world.reference());
        let mut clean = Vec::new();
        for row in &file {
            let quote = validator.row(row);
            clean.push((quote.is_some(), validator.is_clean()));
        }
        assert_eq!(
            clean,
            vec![
                (false, true),
                (true, true),
                (true, true),
                (false, false),
                (true, false)
            ]
        );
        assert_eq!(validator.rows(), 4);
        let places: Vec<(u32, String)> = validator
            .finish()
            .expect_err("refused")
            .errors
            .into_iter()
            .map(|e| (e.row, e.column))
            .collect();
        assert_eq!(
            places,
            vec![(2, "weight".to_owned()), (4, "price".to_owned())]
        );

        // A value under a nameless column makes the file bad at that row.
        let file = rows(&format!("{HEAD}20261120,GPU_Index,B200,1,1,note\n"));
        let mut validator = Validator::new(world.reference());
        validator.row(&file[0]);
        assert!(validator.is_clean());
        validator.row(&file[1]);
        assert!(!validator.is_clean());
    }

    #[test]
    fn columns_in_any_order_and_any_header_case() {
        let world = World::new();
        let quotes = world
            .csv(
                " PRICE ,Weight,Specification,\tIndex_Code,Trade_Date\n\
                 250000,0.5,B200,GPU_Index,20261120\n\
                 180000,0.5,H100,GPU_Index,20261120\n",
            )
            .expect("valid");
        assert_eq!(
            quotes,
            vec![
                quote("2026-11-20", "GPU_Index", "B200", "0.5", "250000"),
                quote("2026-11-20", "GPU_Index", "H100", "0.5", "180000"),
            ]
        );
    }

    #[test]
    fn an_extra_column_is_refused() {
        let world = World::new();
        let errors = world.errors(
            "trade_date,index_code,specification,weight,price,comment\n\
             20261120,GPU_Index,B200,1,250000,hi\n",
        );
        assert_eq!(
            errors,
            vec![err(
                1,
                "comment",
                "unknown column 'comment' (column F); the only columns allowed are \
                 trade_date, index_code, specification, weight, price, in any order"
            )]
        );
    }

    #[test]
    fn a_missing_column_is_refused() {
        let world = World::new();
        let errors = world.errors("trade_date,index_code,specification,weight\nx,y,z,1\n");
        assert_eq!(
            errors,
            vec![err(
                1,
                "price",
                "missing column price; the header must name trade_date, index_code, \
                 specification, weight, price"
            )]
        );
    }

    #[test]
    fn a_duplicate_column_is_refused() {
        let world = World::new();
        let errors =
            world.errors("trade_date,index_code,specification,weight,price,Weight\n1,2,3,4,5,6\n");
        assert_eq!(
            errors,
            vec![err(
                1,
                "Weight",
                "column weight appears twice (columns D and F)"
            )]
        );
    }

    #[test]
    fn header_problems_are_all_listed_and_data_rows_left_alone() {
        let world = World::new();
        // Every data cell is bad too, but only the header is reported.
        let places = world.places(
            "trade_date,foo,specification,weight,weight,bar\n\
             never,Hardware_Index,,-1,0,x\n",
        );
        assert_eq!(
            places,
            vec![
                at(1, "index_code"),
                at(1, "weight"),
                at(1, "price"),
                at(1, "foo"),
                at(1, "bar"),
            ]
        );
    }

    #[test]
    fn a_non_text_header_cell_is_refused() {
        let world = World::new();
        let sheet = Sheet {
            rows: vec![
                SheetRow {
                    number: 1,
                    cells: vec![
                        Cell::Text("trade_date".into()),
                        Cell::Text("index_code".into()),
                        Cell::Text("specification".into()),
                        Cell::Text("weight".into()),
                        Cell::Text("price".into()),
                        Cell::Number("42".into()),
                    ],
                },
                SheetRow {
                    number: 2,
                    cells: vec![],
                },
            ],
        };
        let errors = validate(&sheet, world.reference()).expect_err("refused");
        assert_eq!(
            errors,
            vec![err(
                1,
                "42",
                "the header cell in column F holds the number 42; header cells must be the \
                 column names trade_date, index_code, specification, weight, price"
            )]
        );
    }

    #[test]
    fn an_unnamed_column_with_values_is_an_extra_column() {
        let world = World::new();
        let errors = world.errors(&format!("{HEAD}20261120,GPU_Index,B200,1,250000,,note\n"));
        assert_eq!(
            errors,
            vec![err(
                1,
                "",
                "column G holds values but has no header name; the only columns allowed are \
                 trade_date, index_code, specification, weight, price"
            )]
        );
        // Trailing separators without values are harmless.
        world
            .csv(
                "trade_date,index_code,specification,weight,price,,\n\
                 20261120,GPU_Index,B200,1,250000,,\n",
            )
            .expect("valid");
    }

    #[test]
    fn an_empty_file_is_one_error() {
        let world = World::new();
        let expected = vec![err(
            1,
            "",
            "the file is empty: expected a header row trade_date, index_code, specification, \
             weight, price and at least one quote",
        )];
        assert_eq!(world.errors(""), expected);
        assert_eq!(world.errors("\u{FEFF}\n,,,\n"), expected);
        assert_eq!(
            validate(&Sheet::default(), world.reference()).expect_err("empty"),
            expected
        );
    }

    #[test]
    fn a_header_without_quotes_is_one_error() {
        let world = World::new();
        assert_eq!(
            world.errors(HEAD),
            vec![err(2, "", "no quotes below the header")]
        );
        // The header on sheet row 3: the first quote row would be row 4.
        assert_eq!(
            world.errors(&format!("\n\n{HEAD}")),
            vec![err(4, "", "no quotes below the header")]
        );
    }

    #[test]
    fn trade_date_forms() {
        let world = World::new();
        for form in ["20261120", "2026-11-20", " 20261120\t"] {
            let quotes = world.csv(&one_row(TRADE_DATE, form)).expect(form);
            assert_eq!(quotes[0].trade_date, day("2026-11-20"));
        }
        // A date cell, and a General number cell holding 20261120.
        for cell in [
            Cell::Date(day("2026-11-20")),
            Cell::Number("20261120".into()),
        ] {
            let mut sheet =
                workbook::read(FileKind::Csv, one_row(0, "x").as_bytes()).expect("readable");
            sheet.rows[1].cells[TRADE_DATE] = cell;
            let quotes = validate(&sheet, world.reference()).expect("valid");
            assert_eq!(quotes[0].trade_date, day("2026-11-20"));
        }
    }

    #[test]
    fn trade_date_errors() {
        let world = World::new();
        let cases = [
            ("20261121", "2026-11-21 is not an open trading day"),
            ("2026-11-21", "2026-11-21 is not an open trading day"),
            ("20261131", "'20261131' is not a real calendar date"),
            ("2026-02-29", "'2026-02-29' is not a real calendar date"),
            (
                "20/11/2026",
                "'20/11/2026' is not a date in the form YYYYMMDD or YYYY-MM-DD",
            ),
            (
                "2026112",
                "'2026112' is not a date in the form YYYYMMDD or YYYY-MM-DD",
            ),
            (
                "2026-1-200",
                "'2026-1-200' is not a date in the form YYYYMMDD or YYYY-MM-DD",
            ),
            ("", "missing"),
            ("   ", "missing"),
        ];
        for (value, reason) in cases {
            let errors = world.errors(&one_row(TRADE_DATE, value));
            assert_eq!(errors, vec![err(2, "trade_date", reason)], "{value}");
        }
        let mut sheet =
            workbook::read(FileKind::Csv, one_row(0, "x").as_bytes()).expect("readable");
        sheet.rows[1].cells[TRADE_DATE] = Cell::Number("46346".into());
        assert_eq!(
            validate(&sheet, world.reference()).expect_err("serial"),
            vec![err(
                2,
                "trade_date",
                "46346 is a number, not a date: format the cell as a date or write the date \
                 as YYYYMMDD or YYYY-MM-DD"
            )]
        );
        sheet.rows[1].cells[TRADE_DATE] = Cell::Invalid("a date with a time of day".into());
        assert_eq!(
            validate(&sheet, world.reference()).expect_err("time"),
            vec![err(
                2,
                "trade_date",
                "the cell holds a date with a time of day; expected a date (YYYYMMDD or \
                 YYYY-MM-DD)"
            )]
        );
    }

    #[test]
    fn index_code_rules() {
        let world = World::new();
        let quotes = world
            .csv(&one_row(INDEX_CODE, " GPU_Index "))
            .expect("trimmed");
        assert_eq!(quotes[0].index_code, "GPU_Index");
        assert_eq!(
            world.reason(&one_row(INDEX_CODE, "Hardware_Index")),
            "Hardware_Index is calculated from the base indexes and takes no quotes"
        );
        assert_eq!(
            world.reason(&one_row(INDEX_CODE, "CPU_Index")),
            "unknown index code 'CPU_Index'"
        );
        assert_eq!(
            world.reason(&one_row(INDEX_CODE, "gpu_index")),
            "unknown index code 'gpu_index' (did you mean 'GPU_Index'? index codes are \
             case-sensitive)"
        );
        assert_eq!(world.reason(&one_row(INDEX_CODE, "")), "missing");
    }

    #[test]
    fn specification_is_kept_exactly() {
        let world = World::new();
        let csv = format!(
            "{HEAD}20261120,GPU_Index,\"  Ä 8x B200 SXM 180GB \",0.5,1\n\
             20261120,GPU_Index,ä 8x b200 sxm 180gb,0.5,1\n"
        );
        let quotes = world.csv(&csv).expect("valid");
        // Differing in case and spaces only: two distinct specifications.
        assert_eq!(quotes[0].specification, "  Ä 8x B200 SXM 180GB ");
        assert_eq!(quotes[1].specification, "ä 8x b200 sxm 180gb");
    }

    #[test]
    fn specification_errors() {
        let world = World::new();
        assert_eq!(world.reason(&one_row(SPECIFICATION, "")), "missing");
        assert_eq!(
            world.reason(&one_row(SPECIFICATION, " \t ")),
            "the specification is blank (only spaces)"
        );
        // 200 characters of two bytes each are fine; 201 are not.
        let long = "Ä".repeat(200);
        let quotes = world
            .csv(&one_row(SPECIFICATION, &long))
            .expect("200 chars");
        assert_eq!(quotes[0].specification, long);
        assert_eq!(
            world.reason(&one_row(SPECIFICATION, &"Ä".repeat(201))),
            "the specification is 201 characters long; at most 200 are allowed"
        );
    }

    #[test]
    fn a_numeric_specification_is_its_text() {
        let world = World::new();
        let mut sheet =
            workbook::read(FileKind::Csv, one_row(0, "20261120").as_bytes()).expect("readable");
        sheet.rows[1].cells[SPECIFICATION] = Cell::Number("4090".into());
        let quotes = validate(&sheet, world.reference()).expect("valid");
        assert_eq!(quotes[0].specification, "4090");
    }

    #[test]
    fn weight_rules() {
        let world = World::new();
        for ok in ["1", "1.00000000", " 1 ", "+1", "1.", "01"] {
            let quotes = world.csv(&one_row(WEIGHT, ok)).expect(ok);
            assert_eq!(quotes[0].weight, Decimal::ONE, "{ok}");
        }
        let cases = [
            ("0", "the weight must be greater than 0, found 0"),
            ("-0.5", "the weight must be greater than 0, found -0.5"),
            ("-0", "the weight must be greater than 0, found -0"),
            ("1.5", "the weight must be at most 1, found 1.5"),
            (
                "1.00000001",
                "the weight must be at most 1, found 1.00000001",
            ),
            ("2", "the weight must be at most 1, found 2"),
            (
                "0.123456789",
                "the weight 0.123456789 has 9 decimal places; at most 8 are allowed",
            ),
            (
                "1e-3",
                "'1e-3' is in exponent notation; write the number out in full (such as \
                 0.001), since exponent notation may mean the spreadsheet rounded it",
            ),
            (
                "abc",
                "'abc' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
            ),
            (
                ".",
                "'.' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
            ),
            (
                "NaN",
                "'NaN' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
            ),
            ("", "missing"),
        ];
        for (value, reason) in cases {
            assert_eq!(
                world.errors(&one_row(WEIGHT, value)),
                vec![err(2, "weight", reason)],
                "{value}"
            );
        }
        // "0,5" splits into two CSV fields: that is an unnamed extra column.
        assert_eq!(world.places(&one_row(WEIGHT, "0,5")), vec![at(1, "")]);
    }

    #[test]
    fn weight_places_count_after_trailing_zeros() {
        let world = World::new();
        let csv = format!(
            "{HEAD}20261120,GPU_Index,a,0.500000000000000000000000000000,1\n\
             20261120,GPU_Index,b,0.50000000,1\n"
        );
        let quotes = world.csv(&csv).expect("valid");
        assert_eq!(quotes[0].weight, dec("0.5"));
        assert_eq!(quotes[1].weight, dec("0.5"));
    }

    #[test]
    fn price_rules() {
        let world = World::new();
        for (ok, value) in [
            ("0.000001", "0.000001"),
            ("250000.100000000", "250000.1"),
            ("999999999999999999.999999", "999999999999999999.999999"),
            ("  42 ", "42"),
        ] {
            let quotes = world.csv(&one_row(PRICE, ok)).expect(ok);
            assert_eq!(quotes[0].price, dec(value), "{ok}");
        }
        let cases = [
            ("0", "the price must be greater than 0, found 0"),
            (
                "0.0000000",
                "the price must be greater than 0, found 0.0000000",
            ),
            ("-1", "the price must be greater than 0, found -1"),
            (
                "0.0000001",
                "the price 0.0000001 has 7 decimal places; at most 6 are allowed",
            ),
            (
                "1000000000000000000",
                "the price 1000000000000000000 is too large: at most 18 digits before the \
                 decimal point",
            ),
            (
                "$100",
                "'$100' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
            ),
            (
                "2.5E+11",
                "'2.5E+11' is in exponent notation; write the number out in full (such as \
                 0.001), since exponent notation may mean the spreadsheet rounded it",
            ),
            ("", "missing"),
        ];
        for (value, reason) in cases {
            assert_eq!(
                world.errors(&one_row(PRICE, value)),
                vec![err(2, "price", reason)],
                "{value}"
            );
        }
    }

    #[test]
    fn every_bad_cell_of_every_row_is_reported_in_order() {
        let world = World::new();
        let errors = world.errors(
            "price,weight,specification,index_code,trade_date\n\
             1,0.5,ok,GPU_Index,20261120\n\
             -1,2,,Hardware_Index,20261121\n\
             1,0.5,ok2,GPU_Index,20261120\n\
             1,,x,Nope,\n",
        );
        let places: Vec<(u32, &str)> = errors.iter().map(|e| (e.row, e.column.as_str())).collect();
        assert_eq!(
            places,
            vec![
                (3, "trade_date"),
                (3, "index_code"),
                (3, "specification"),
                (3, "weight"),
                (3, "price"),
                (5, "trade_date"),
                (5, "index_code"),
                (5, "weight"),
            ]
        );
        // The GPU_Index group of rows 2 and 4 sums to 1: no sum error.
    }

    #[test]
    fn duplicates_name_the_first_row() {
        let world = World::new();
        let errors = world.errors(&format!(
            "{HEAD}20261120,GPU_Index,B200,0.5,1\n\
             20261120,GPU_Index,B200 ,0.5,1\n\
             2026-11-20,GPU_Index,B200,0.5,2\n\
             20261120,Server_Index,B200,1,1\n\
             20261120, GPU_Index,B200,0.5,3\n"
        ));
        let reason = "duplicate of row 2: the same trade_date, index_code and specification \
                      appear there";
        assert_eq!(
            errors,
            vec![
                err(4, "specification", reason),
                err(6, "specification", reason)
            ]
        );
    }

    #[test]
    fn weights_must_sum_to_exactly_one() {
        let world = World::new();
        let errors = world.errors(&format!(
            "{HEAD}20261110,Server_Index,a,0.6,1\n\
             20261110,Server_Index,b,0.3,1\n\
             20261110,GPU_Index,a,1,1\n\
             20261120,Server_Index,a,0.50000001,1\n\
             20261120,Server_Index,b,0.5,1\n"
        ));
        assert_eq!(
            errors,
            vec![
                err(
                    2,
                    "weight",
                    "weights of Server_Index on 2026-11-10 sum to 0.9 (rows 2, 3), not 1"
                ),
                err(
                    3,
                    "weight",
                    "weights of Server_Index on 2026-11-10 sum to 0.9 (rows 2, 3), not 1"
                ),
                err(
                    5,
                    "weight",
                    "weights of Server_Index on 2026-11-20 sum to 1.00000001 (rows 5, 6), not 1"
                ),
                err(
                    6,
                    "weight",
                    "weights of Server_Index on 2026-11-20 sum to 1.00000001 (rows 5, 6), not 1"
                ),
            ]
        );
    }

    #[test]
    fn eight_digit_weights_sum_exactly() {
        let world = World::new();
        let quotes = world
            .csv(&format!(
                "{HEAD}20261120,GPU_Index,a,0.33333333,1\n\
                 20261120,GPU_Index,b,0.33333333,1\n\
                 20261120,GPU_Index,c,0.33333334,1\n"
            ))
            .expect("sums to 1");
        let sum: Decimal = quotes.iter().map(|q| q.weight).sum();
        assert_eq!(sum, Decimal::ONE);
    }

    #[test]
    fn a_long_group_lists_ten_rows() {
        let world = World::new();
        let mut csv = HEAD.to_owned();
        for i in 0..12 {
            csv.push_str(&format!("20261120,GPU_Index,s{i},0.01,1\n"));
        }
        let errors = world.errors(&csv);
        assert_eq!(errors.len(), 12);
        assert_eq!(
            errors[0].reason,
            "weights of GPU_Index on 2026-11-20 sum to 0.12 (rows 2, 3, 4, 5, 6, 7, 8, 9, 10, \
             11 and 2 more), not 1"
        );
    }

    #[test]
    fn a_group_with_a_bad_row_skips_the_sum() {
        let world = World::new();
        // Rows 2-3 would sum to 0.3, but row 3's price is bad: only that is reported.
        // Rows 4-6: a duplicate, whose sum would be off by its weight.
        assert_eq!(
            world.places(&format!(
                "{HEAD}20261120,GPU_Index,a,0.1,1\n\
                 20261120,GPU_Index,b,0.2,zero\n\
                 20261123,GPU_Index,a,0.5,1\n\
                 20261123,GPU_Index,b,0.5,1\n\
                 20261123,GPU_Index,b,0.5,1\n"
            )),
            vec![at(3, "price"), at(6, "specification")]
        );
    }

    #[test]
    fn csv_with_bom_quotes_and_unicode() {
        let world = World::new();
        let csv = "\u{FEFF}trade_date,index_code,specification,weight,price\r\n\
                   20261120,GPU_Index,\"Ä 8x B200 SXM 180GB, \"\"liquid\"\"\",0.25,\"250000.1\"\r\n\
                   20261120,GPU_Index,\" 中文 H20 \",0.75,1\r\n";
        let quotes = world.csv(csv).expect("valid");
        assert_eq!(
            quotes,
            vec![
                quote(
                    "2026-11-20",
                    "GPU_Index",
                    "Ä 8x B200 SXM 180GB, \"liquid\"",
                    "0.25",
                    "250000.1"
                ),
                quote("2026-11-20", "GPU_Index", " 中文 H20 ", "0.75", "1"),
            ]
        );
    }

    #[test]
    fn xlsx_round_trip() {
        let world = World::new();
        let rows = vec![
            quote(
                "2026-11-20",
                "GPU_Index",
                "Ä 8x B200 SXM 180GB",
                "0.33333333",
                "250000.123456",
            ),
            quote(
                "2026-11-20",
                "GPU_Index",
                " H100 ",
                "0.33333333",
                "0.000001",
            ),
            quote(
                "2026-11-20",
                "GPU_Index",
                "h100",
                "0.33333334",
                "999999999999999999.999999",
            ),
            quote("2026-11-23", "Server_Index", "HGX, 8 GPUs", "1", "1"),
        ];
        let bytes = workbook::to_xlsx(&rows).expect("xlsx");
        let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
        assert_eq!(validate(&sheet, world.reference()).expect("valid"), rows);

        let bytes = workbook::to_csv(&rows);
        let sheet = workbook::read(FileKind::Csv, &bytes).expect("readable");
        assert_eq!(validate(&sheet, world.reference()).expect("valid"), rows);
    }

    /// A workbook typed by hand: number cells, date cells, formulas.
    fn typed_workbook(last_weight: impl FnOnce(&mut rust_xlsxwriter::Worksheet)) -> Vec<u8> {
        use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};
        let mut book = Workbook::new();
        let sheet = book.add_worksheet();
        sheet.set_formula_result_default("");
        let date_format = Format::new().set_num_format("yyyy-mm-dd");
        for (col, name) in (0u16..).zip(COLUMNS) {
            sheet.write_string(0, col, name).expect("header");
        }
        let date = ExcelDateTime::from_ymd(2026, 11, 20).expect("date");
        for (row, (weight, price)) in (1u32..).zip([(0.1, 250000.1), (0.2, 0.000001)]) {
            sheet
                .write_datetime_with_format(row, 0, &date, &date_format)
                .expect("date");
            sheet.write_string(row, 1, "GPU_Index").expect("index");
            sheet
                .write_string(row, 2, format!("spec {row}"))
                .expect("spec");
            sheet.write_number(row, 3, weight).expect("weight");
            sheet.write_number(row, 4, price).expect("price");
        }
        sheet
            .write_datetime_with_format(3, 0, &date, &date_format)
            .expect("date");
        sheet.write_string(3, 1, "GPU_Index").expect("index");
        sheet.write_number(3, 2, 4090).expect("spec");
        sheet.write_number(3, 4, 1).expect("price");
        last_weight(sheet);
        book.save_to_buffer().expect("save")
    }

    #[test]
    fn xlsx_number_date_and_calculated_formula_cells() {
        let world = World::new();
        let bytes = typed_workbook(|sheet| {
            sheet.write_number(3, 3, 0.7).expect("weight");
        });
        let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
        let quotes = validate(&sheet, world.reference()).expect("valid");
        assert_eq!(
            quotes,
            vec![
                quote("2026-11-20", "GPU_Index", "spec 1", "0.1", "250000.1"),
                quote("2026-11-20", "GPU_Index", "spec 2", "0.2", "0.000001"),
                quote("2026-11-20", "GPU_Index", "4090", "0.7", "1"),
            ]
        );
        // Exactly 0.1 etc. (not the binary double nearest to it): the sum is exactly 1.
        assert_eq!(quotes[0].weight.to_string(), "0.1");
        assert_eq!(quotes[1].price.to_string(), "0.000001");

        let bytes = typed_workbook(|sheet| {
            sheet
                .write_formula(
                    3,
                    3,
                    rust_xlsxwriter::Formula::new("=1-B2").set_result("0.7"),
                )
                .expect("formula");
        });
        let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
        let quotes = validate(&sheet, world.reference()).expect("valid");
        assert_eq!(quotes[2].weight, dec("0.7"));
    }

    #[test]
    fn xlsx_formula_without_result_and_error_values_are_reported() {
        let world = World::new();
        let bytes = typed_workbook(|sheet| {
            sheet.write_formula(3, 3, "=1-D2-D3").expect("formula");
            sheet
                .write_formula(
                    3,
                    4,
                    rust_xlsxwriter::Formula::new("=1/0").set_result("#DIV/0!"),
                )
                .expect("formula");
        });
        let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
        let errors = validate(&sheet, world.reference()).expect_err("refused");
        assert_eq!(
            errors,
            vec![
                err(
                    4,
                    "weight",
                    "the cell holds a formula without a computed value (save the file from a \
                     spreadsheet application that calculates it); expected a weight (a \
                     decimal number)"
                ),
                err(
                    4,
                    "price",
                    "the cell holds the error value #DIV/0!; expected a price (a decimal number)"
                ),
            ]
        );
    }

    #[test]
    fn xlsx_computed_float_noise_is_refused_not_rounded() {
        let world = World::new();
        let bytes = typed_workbook(|sheet| {
            // What a spreadsheet stores for =0.1+0.2 shown as 0.3.
            sheet.write_number(3, 3, 0.1 + 0.2).expect("weight");
        });
        let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
        assert_eq!(
            validate(&sheet, world.reference()).expect_err("refused"),
            vec![err(
                4,
                "weight",
                "the weight 0.30000000000000004 has 17 decimal places; at most 8 are allowed"
            )]
        );
    }

    #[test]
    fn garbage_is_40001_not_a_row_error() {
        let error = workbook::read(FileKind::Xlsx, b"\x00\x01garbage").expect_err("garbage");
        assert_eq!(error.code.as_u32(), 40001);
    }

    #[test]
    fn a_hundred_thousand_rows() {
        let world = World::new();
        let days: Vec<NaiveDate> = world.reference.open_days.iter().copied().collect();
        let mut rows = Vec::with_capacity(100_000);
        for i in 0..100_000usize {
            rows.push(SheetRow {
                number: u32::try_from(i + 2).expect("small"),
                cells: vec![
                    Cell::Text(days[i % 4].format("%Y%m%d").to_string()),
                    Cell::Text("GPU_Index".into()),
                    Cell::Text(format!("spec {}", i / 4)),
                    Cell::Number("0.00004".into()),
                    Cell::Number("250000.123456".into()),
                ],
            });
        }
        rows.insert(
            0,
            SheetRow {
                number: 1,
                cells: COLUMNS.iter().map(|c| Cell::Text(c.to_string())).collect(),
            },
        );
        let sheet = Sheet { rows };
        // Its speed is measured by `cargo bench --bench import`, not here.
        let quotes = validate(&sheet, world.reference()).expect("valid");
        assert_eq!(quotes.len(), 100_000);
        assert_eq!(quotes[99_999].specification, "spec 24999");
    }

    #[test]
    fn column_letters() {
        assert_eq!(column_letter(0), "A");
        assert_eq!(column_letter(25), "Z");
        assert_eq!(column_letter(26), "AA");
        assert_eq!(column_letter(51), "AZ");
        assert_eq!(column_letter(52), "BA");
        assert_eq!(column_letter(16_383), "XFD");
    }
}
