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
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::bounds::MAX_LISTED_ERRORS;
use super::bounds::{column_letter, echo, ErrorList, MAX_CELL_CHARS};
#[cfg(test)]
use super::workbook::Sheet;
use super::workbook::{Cell, SheetRow};
use crate::quotes::recalc::QuoteRow;
use crate::wire_date::{DateError, WireDate};

/// One problem, as the `errors` array of a 422 / 40002 lists it (and the import's
/// record keeps it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Known index codes that bear quotes (every index but the composite).
    pub quote_indexes: BTreeSet<String>,
    pub open_days: BTreeSet<NaiveDate>,
    /// Indexes calculated from others (the composite): a quote for one is a mistake
    /// worth naming.
    pub calculated_indexes: BTreeSet<String>,
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
    let index_code = bounded(INDEX_CODE).and_then(|c| index_code(c, reference));
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
    WireDate::parse(s).map(|d| d.0).map_err(|e| match e {
        DateError::Shape => format!(
            "'{}' is not a date in the form YYYYMMDD or YYYY-MM-DD",
            echo(s)
        ),
        DateError::NotReal => format!("'{}' is not a real calendar date", echo(s)),
    })
}

fn index_code<'r>(cell: &Cell, reference: &'r Reference) -> Result<&'r str, String> {
    let quote_indexes = &reference.quote_indexes;
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
    if reference.calculated_indexes.contains(code) {
        return Err(format!(
            "{code} is calculated from the base indexes and takes no quotes"
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
#[path = "validate_tests.rs"]
mod tests;
