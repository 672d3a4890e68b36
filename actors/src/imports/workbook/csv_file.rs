//! The CSV reader of a quote file: UTF-8 records (a leading BOM dropped) as rows of
//! text cells, numbered as a spreadsheet shows them.
//!
//! A pre-scan numbers the rows and holds the file to the sheet limits and the cell cap
//! before the csv crate reads a record. It must never allocate by a size the file
//! states, alter a cell's text, or panic on any input.

use super::{emit, Cell, SheetRow};
use crate::imports::bounds::{Extent, ImportLimits, MAX_COLUMNS};
use crate::ApiError;

pub(super) fn read_csv(
    bytes: &[u8],
    limits: &ImportLimits,
    each: &mut dyn FnMut(SheetRow) -> bool,
) -> Result<(), ApiError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // The pre-scan refuses a file past the bounds before the csv crate reads a record:
    // it would otherwise grow a record's field list to the length of a line of commas.
    let row_numbers = csv_row_numbers(bytes, limits)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    // Should the pre-scan and the csv crate ever disagree, the records are held to the
    // bounds again before anything is allocated for them.
    let mut extent = Extent::new(limits);
    let mut last_number: u32 = 0;
    let mut record = csv::ByteRecord::new();
    let mut index = 0usize;
    loop {
        let more = reader
            .read_byte_record(&mut record)
            .map_err(|e| ApiError::invalid(format!("the CSV file could not be read: {e}")))?;
        if !more {
            break;
        }
        // The pre-scan mirrors the csv crate's rules; should they ever disagree, number
        // on from the last known row rather than fail.
        let number = match row_numbers.get(index) {
            Some(&n) => n,
            None => last_number.saturating_add(1),
        };
        last_number = number;
        index += 1;
        extent.record(u64::from(number), record.len() as u64)?;
        let mut cells = Vec::with_capacity(record.len());
        for (i, field) in record.iter().enumerate() {
            let text = std::str::from_utf8(field).map_err(|_| {
                ApiError::invalid(format!(
                    "the CSV file is not UTF-8 text (row {number}, field {}): save it as CSV \
                     UTF-8",
                    i + 1
                ))
            })?;
            cells.push(if text.is_empty() {
                Cell::Empty
            } else {
                Cell::judged_once(text)
            });
        }
        if !emit(each, number, cells) {
            break;
        }
    }
    Ok(())
}

/// The spreadsheet row number of each CSV record, in order, or the refusal of a file
/// past the bounds: a row past the last sheet row, a row of more fields than a sheet
/// has columns, more fields than [`ImportLimits::max_cells`] in all.
///
/// The csv crate skips empty lines, where a spreadsheet shows a blank row; and a quoted
/// field may span lines, where a spreadsheet shows one row. So a row ends at a line
/// break (`\n`, `\r\n` or `\r`) outside quotes, and only rows with at least one byte
/// are records. The quote rules are the csv crate's: a quote opens a field only at its
/// start, `""` inside quotes is a literal quote, and a field ends at a `,` outside
/// quotes.
fn csv_row_numbers(bytes: &[u8], limits: &ImportLimits) -> Result<Vec<u32>, ApiError> {
    #[derive(Clone, Copy)]
    enum State {
        FieldStart,
        Unquoted,
        Quoted,
        QuoteInQuoted,
    }
    let mut extent = Extent::new(limits);
    // At most one number per sheet row: the Vec never outgrows the sheet's rows.
    let mut numbers = Vec::new();
    let mut state = State::FieldStart;
    let mut row: u32 = 1;
    let mut row_has_bytes = false;
    let mut fields: u64 = 1;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        let line_break = matches!(b, b'\n' | b'\r') && !matches!(state, State::Quoted);
        if line_break {
            if b == b'\r' && bytes.get(i) == Some(&b'\n') {
                i += 1;
            }
            if row_has_bytes {
                extent.record(u64::from(row), fields)?;
                numbers.push(row);
            }
            row = row.saturating_add(1);
            row_has_bytes = false;
            fields = 1;
            state = State::FieldStart;
            continue;
        }
        row_has_bytes = true;
        state = match (state, b) {
            (State::FieldStart, b'"') => State::Quoted,
            (State::FieldStart | State::Unquoted | State::QuoteInQuoted, b',') => {
                fields += 1;
                // Refused at the first field past the limit, not at the end of the line.
                if fields > u64::from(MAX_COLUMNS) {
                    extent.record(u64::from(row), fields)?;
                }
                State::FieldStart
            }
            (State::FieldStart | State::Unquoted, _) => State::Unquoted,
            (State::Quoted, b'"') => State::QuoteInQuoted,
            (State::Quoted, _) => State::Quoted,
            (State::QuoteInQuoted, b'"') => State::Quoted,
            (State::QuoteInQuoted, _) => State::Unquoted,
        };
    }
    if row_has_bytes {
        extent.record(u64::from(row), fields)?;
        numbers.push(row);
    }
    Ok(numbers)
}
