//! One data row: each cell checked by its column's rule ([`super::columns`],
//! [`super::amounts`]) after the bounds of any cell (length, NUL), every problem
//! reported, and the row's quote when all five cells are good.
//!
//! It must never stop at a row's first bad cell: each is reported, in the D8 column
//! order.

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::amounts::{price, weight};
use super::cells::{
    out_of_bounds, ImportReference, COLUMNS, INDEX_CODE, PRICE, SPECIFICATION, TRADE_DATE, WEIGHT,
};
use super::columns::{index_code, specification, trade_date};
use super::RowError;
#[cfg(doc)]
use crate::imports::bounds::text_bound;
use crate::imports::bounds::ErrorList;
use crate::imports::workbook::{Cell, SheetRow};
use crate::quotes::recalc::QuoteRow;

/// One data row after its own checks: each cell's value when it is valid, so the rules
/// across rows can judge every cell that could be read, even in a row with a bad one.
pub(super) struct Parsed<'r> {
    pub(super) number: u32,
    /// The row's date and index, when both are valid: the group it belongs to.
    pub(super) group: Option<(NaiveDate, &'r str)>,
    pub(super) specification: Option<String>,
    pub(super) weight: Option<Decimal>,
    pub(super) price: Option<Decimal>,
}

impl Parsed<'_> {
    /// The row's quote, when every cell of it is valid.
    pub(super) fn into_quote(self) -> Option<QuoteRow> {
        let (trade_date, index_code) = self.group?;
        Some(QuoteRow {
            trade_date,
            index_code: index_code.to_owned(),
            specification: self.specification?,
            weight: self.weight?,
            price: self.price?,
        })
    }
}

static EMPTY: Cell = Cell::Empty;

pub(super) fn parse_row<'r>(
    row: &SheetRow,
    positions: &[usize; 5],
    reference: &'r ImportReference,
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

    let trade_date = bounded(TRADE_DATE).and_then(|c| trade_date(c, reference));
    let index_code = bounded(INDEX_CODE).and_then(|c| index_code(c, reference));
    let specification = bounded(SPECIFICATION).and_then(specification);
    let weight = bounded(WEIGHT).and_then(weight);
    let price = bounded(PRICE).and_then(price);

    let (trade_date, date_problem) = split(trade_date);
    let (index_code, index_problem) = split(index_code);
    let (specification, specification_problem) = split(specification);
    let (weight, weight_problem) = split(weight);
    let (price, price_problem) = split(price);
    let problems = [
        date_problem,
        index_problem,
        specification_problem,
        weight_problem,
        price_problem,
    ];
    for (k, problem) in problems.into_iter().enumerate() {
        if let Some(reason) = problem {
            report(k, reason);
        }
    }
    Parsed {
        number: row.number,
        group: trade_date.zip(index_code),
        specification,
        weight,
        price,
    }
}

/// A cell's value, or why it has none.
fn split<T>(checked: Result<T, String>) -> (Option<T>, Option<String>) {
    match checked {
        Ok(value) => (Some(value), None),
        Err(problem) => (None, Some(problem)),
    }
}
