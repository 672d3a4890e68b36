//! Tests of the D8 rules ([`super`]): every rule and its reason, one file a topic:
//! [`file`] (the whole file, row by row), [`header`], [`columns`] (date, index code,
//! specification), [`amounts`] (weight, price), [`across_rows`] (duplicates, weight
//! sums) and [`formats`] (the same rules through CSV and `.xlsx`). This file holds the
//! helpers they share.

mod across_rows;
mod amounts;
mod columns;
mod file;
mod formats;
mod header;

use std::str::FromStr;

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::cells::*;
use super::*;
use crate::imports::workbook::{self, FileKind, Sheet};
use crate::imports::write;

/// A whole sheet at once: every row valid gives the quote rows in file order,
/// otherwise the problems listed.
fn validate(sheet: &Sheet, reference: &ImportReference) -> Result<Vec<QuoteRow>, Vec<RowError>> {
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

fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("test date")
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).expect("test decimal")
}

struct World {
    reference: ImportReference,
}

impl World {
    fn new() -> Self {
        World {
            reference: ImportReference {
                quote_indexes: ["GPU_Index", "Server_Index"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                // 2026-11-21/22 are a weekend.
                open_days: ["2026-11-10", "2026-11-19", "2026-11-20", "2026-11-23"]
                    .iter()
                    .map(|s| day(s))
                    .collect(),
                calculated_indexes: ["Hardware_Index".to_owned()].into_iter().collect(),
                today: day("2026-11-23"),
            },
        }
    }

    fn reference(&self) -> &ImportReference {
        &self.reference
    }

    /// The rules' verdict on a file of `kind`, which must be readable.
    fn file(&self, kind: FileKind, bytes: &[u8]) -> Result<Vec<QuoteRow>, Vec<RowError>> {
        let sheet = workbook::read(kind, bytes).expect("readable");
        validate(&sheet, self.reference())
    }

    fn csv(&self, text: &str) -> Result<Vec<QuoteRow>, Vec<RowError>> {
        self.file(FileKind::Csv, text.as_bytes())
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

    /// Each `(value, reason)` of `cases`: a one-data-row file with `value` in `column`
    /// (its other cells fine) is refused with that one reason, in that column.
    fn refuses_each(&self, column: usize, cases: &[(&str, &str)]) {
        for (value, reason) in cases {
            assert_eq!(
                self.errors(&one_row(column, value)),
                vec![err(2, COLUMNS[column], reason)],
                "{value}"
            );
        }
    }

    /// The one error of a one-data-row file whose other cells are fine.
    fn reason(&self, text: &str) -> String {
        let errors = self.errors(text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].reason.clone()
    }
}

/// Asserts that the rules accepted a file as exactly `expected`; answers its quotes.
#[track_caller]
fn accepted(verdict: Result<Vec<QuoteRow>, Vec<RowError>>, expected: &[QuoteRow]) -> Vec<QuoteRow> {
    let quotes = verdict.expect("valid");
    assert_eq!(quotes, expected);
    quotes
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
