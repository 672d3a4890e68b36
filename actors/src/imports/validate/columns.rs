//! The rules of the three identifying cells: the trade date (an open trading day, in
//! `YYYYMMDD` or `YYYY-MM-DD`, or a date cell), the index code (a known index that takes
//! quotes, case-sensitive) and the specification (kept exactly as written).
//!
//! It must never alter a specification name: no trimming, no case folding.

use chrono::NaiveDate;

use super::cells::{holds, trim_ascii, ImportReference, MAX_SPECIFICATION_CHARS, MISSING};
use crate::imports::bounds::echo;
use crate::imports::workbook::Cell;
use crate::safe_text::text_problem;
use crate::wire_date::{DateError, WireDate};

const DATE_FORMS: &str = "a date (YYYYMMDD or YYYY-MM-DD)";

pub(super) fn trade_date(cell: &Cell, reference: &ImportReference) -> Result<NaiveDate, String> {
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
    // D26: a day is imported once it has been priced; a later one would become
    // visible when the day's cutoff moves, before anyone priced it.
    if date > reference.today {
        return Err(format!(
            "date is after today: {} (today is {})",
            date.format("%Y-%m-%d"),
            reference.today.format("%Y-%m-%d")
        ));
    }
    if reference.open_days.contains(&date) {
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

pub(super) fn index_code<'r>(
    cell: &Cell,
    reference: &'r ImportReference,
) -> Result<&'r str, String> {
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

pub(super) fn specification(cell: &Cell) -> Result<String, String> {
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
    if let Some(reason) = text_problem(name) {
        return Err(format!("the specification {reason}"));
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
