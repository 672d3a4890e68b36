//! The header row: where each D8 column is (any order, any letter case, spaces around a
//! name ignored), or every problem of the header itself: an unknown, missing or doubled
//! column, a cell that is not text, a cell past the bounds of any cell.
//!
//! It must never guess a column: a header it cannot read leaves the data rows unread.

use super::cells::{describe, out_of_bounds, COLUMNS, EXPECTED_HEADER};
use super::RowError;
use crate::imports::bounds::{column_letter, echo};
use crate::imports::workbook::{Cell, SheetRow};

/// Where each D8 column is (`positions[TRADE_DATE]` is the cell index of trade_date),
/// or every problem of the header row itself (unnamed columns with values are found
/// in the data rows, by [`Validator::row`]).
pub(super) fn header_positions(header: &SheetRow) -> Result<[usize; 5], Vec<RowError>> {
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
        Cell::OutOfBounds { shown, .. } => shown.clone(),
        Cell::Date(d) => d.format("%Y-%m-%d").to_string(),
    }
}
