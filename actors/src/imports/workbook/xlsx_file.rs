//! The `.xlsx` reader of a quote file: the first sheet, streamed cell by cell through
//! calamine, after the archive check ([`crate::imports::archive`]).
//!
//! A workbook value becomes a [`Cell`] here: numbers as their shortest decimal text,
//! dates only without a time of day, anything else an invalid cell saying what it
//! holds. It must never do arithmetic on a number, let a calamine panic escape (a
//! crafted reference is a damaged file, 400 / 40001), or grow a row past the sheet's
//! columns.

use std::collections::HashMap;
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};

use calamine::{open_workbook_from_rs, Data, DataRef, Reader, Xlsx, XlsxError};
use chrono::NaiveDate;

use crate::wire_date::WireDate;

use super::{emit, Cell, SheetRow, NOT_XLSX, OLE_MAGIC};
use crate::imports::archive;
use crate::imports::bounds::{
    check_declared, echo, library_error, Extent, ImportLimits, MAX_COLUMNS,
};
use crate::ApiError;

/// The invalid-cell phrase for a formula whose result was never stored.
pub(super) const UNCALCULATED_FORMULA: &str =
    "a formula without a computed value (save the file from a \
     spreadsheet application that calculates it)";

pub(super) fn read_xlsx(
    bytes: &[u8],
    limits: &ImportLimits,
    each: &mut dyn FnMut(SheetRow) -> bool,
) -> Result<(), ApiError> {
    // A 0-byte upload is an empty file, as for CSV: the validator reports it as such
    // rather than as a damaged workbook.
    if bytes.is_empty() {
        return Ok(());
    }
    archive::check(bytes, limits)?;
    let mut workbook: Xlsx<_> = guarded(|| open_workbook_from_rs(Cursor::new(bytes)))?
        .map_err(|e| unreadable_workbook(bytes, &e))?;
    let Some(name) = workbook.sheet_names().first().cloned() else {
        return Err(ApiError::invalid("the workbook has no worksheet"));
    };
    // One streaming pass over the sheet's XML gives each cell's stored value and
    // whether it holds a formula: no dense grid, no second parse for the formulas.
    let unreadable = |e: XlsxError| {
        ApiError::invalid(format!(
            "the first sheet '{}' cannot be read: {}",
            echo(&name),
            library_error(&e)
        ))
    };
    let mut reader = guarded(|| workbook.worksheet_cells_reader(&name))?.map_err(unreadable)?;
    // The declared range is read with the sheet's start, before its first cell.
    let declared = reader.dimensions();
    check_declared(&name, declared.start, declared.end)?;
    let mut extent = Extent::new(limits);
    // The character count of each shared string too long for a cell, by its address in
    // calamine's table (which does not move while the sheet is read): a string referenced
    // by many cells is counted once. At most one entry per 2,000 bytes of shared text.
    let mut long_shared: HashMap<usize, usize> = HashMap::new();
    // The row being read: its absolute number (0 = row 1) and its cells so far. The
    // format lists rows in ascending order (spreadsheet applications refuse a sheet
    // that does not), so a row is complete when a cell of a later one comes.
    let mut current: Option<(u32, Vec<Cell>)> = None;
    while let Some(record) =
        guarded(|| reader.next_cell_with_formula_metadata())?.map_err(unreadable)?
    {
        let (row, col) = record.pos;
        // Every cell, blank or not, before anything is allocated for it.
        extent.cell(row, col)?;
        let Some(cell) = cell_of(record.value, record.formula.is_some(), &mut long_shared) else {
            continue;
        };
        let Some(cells) = row_cells(&mut current, row, &name, each)? else {
            return Ok(());
        };
        put(cells, col, cell, &mut extent)?;
    }
    if let Some((number, cells)) = current {
        emit(each, number.saturating_add(1), cells);
    }
    Ok(())
}

/// A cell as the validator judges it; `None` for a blank one. `long_shared` counts the
/// characters of each long shared string once, by its address in calamine's table.
fn cell_of(
    value: DataRef<'_>,
    formula: bool,
    long_shared: &mut HashMap<usize, usize>,
) -> Option<Cell> {
    let cell = match value {
        // Most quote cells are text; take them without a copy through `Data`, judged
        // before they are copied.
        DataRef::SharedString(text) if !text.is_empty() => Cell::judged(text, |t| {
            *long_shared
                .entry(t.as_ptr() as usize)
                .or_insert_with(|| t.chars().count())
        }),
        DataRef::String(text) if !text.is_empty() => Cell::judged_once(&text),
        value => convert(&Data::from(value)),
    };
    if !cell.is_empty() {
        Some(cell)
    } else if formula {
        // A formula cell whose result was never stored reads as empty: without this
        // check a workbook written by a tool that does not calculate would lose quotes
        // silently.
        Some(Cell::Invalid(UNCALCULATED_FORMULA.to_owned()))
    } else {
        None
    }
}

/// The cells of row `row` (0 = row 1) to add a cell to: the row being read, or a new
/// one after `current` is handed to `each` (`None` when `each` wants no more). A row
/// before the current one is a damaged sheet (spreadsheet applications refuse one).
fn row_cells<'c>(
    current: &'c mut Option<(u32, Vec<Cell>)>,
    row: u32,
    sheet: &str,
    each: &mut dyn FnMut(SheetRow) -> bool,
) -> Result<Option<&'c mut Vec<Cell>>, ApiError> {
    match current {
        Some((number, _)) if *number == row => {}
        Some((number, _)) if *number > row => {
            return Err(ApiError::invalid(format!(
                "the first sheet '{sheet}' lists row {} after row {}: its rows are out of \
                 order; open it in a spreadsheet application and save it again",
                row.saturating_add(1),
                number.saturating_add(1)
            )));
        }
        _ => {
            if let Some((number, cells)) = current.take() {
                if !emit(each, number.saturating_add(1), cells) {
                    return Ok(None);
                }
            }
            *current = Some((row, Vec::new()));
        }
    }
    Ok(current.as_mut().map(|(_, cells)| cells))
}

/// Runs one call into calamine. Its parser does unchecked arithmetic on numbers read
/// from the file (a cell reference's column letters and row digits, a dimension's
/// span): with overflow checks (debug builds) a crafted reference panics there, and
/// without them it wraps to a position the bounds then judge. Either way the file is
/// damaged, so a panic is reported as such, 400 / 40001, not as a failed import; the
/// reader's state is dropped with the error, never used again.
fn guarded<T>(call: impl FnOnce() -> T) -> Result<T, ApiError> {
    catch_unwind(AssertUnwindSafe(call)).map_err(|_| ApiError::invalid(DAMAGED))
}

const DAMAGED: &str = "the workbook is damaged (a cell reference or range cannot be read): \
                       save it again as an Excel workbook (.xlsx)";

/// Why a workbook cannot be opened, in words that say what to do (the library's own
/// message, such as "Could not find EOCD", means nothing to a business user).
fn unreadable_workbook(bytes: &[u8], error: &XlsxError) -> ApiError {
    let save_again = "save it again as an Excel workbook (.xlsx)";
    ApiError::invalid(match error {
        XlsxError::Password => {
            "the workbook is password protected: remove the password and upload it again".to_owned()
        }
        _ if bytes.starts_with(OLE_MAGIC) => format!(
            "the file is an old-style .xls workbook (or an encrypted one), not .xlsx: \
             {save_again}"
        ),
        XlsxError::Zip(_) => NOT_XLSX.to_owned(),
        other => format!(
            "the file is not a readable .xlsx workbook ({}): {save_again}",
            library_error(other)
        ),
    })
}

/// Sets the cell of column `col` (0-based), padding the row with empty cells, which
/// count against the cell cap as the cells read do: a cell at XFD on every row would
/// otherwise cost 16,384 cells a row. The caller has held `col` to the sheet's columns
/// ([`Extent::cell`]); a column past them is dropped here all the same, so a row never
/// grows past [`MAX_COLUMNS`] cells, whatever a file says.
fn put(cells: &mut Vec<Cell>, col: u32, cell: Cell, extent: &mut Extent) -> Result<(), ApiError> {
    if col >= MAX_COLUMNS {
        return Ok(());
    }
    let Ok(col) = usize::try_from(col) else {
        return Ok(());
    };
    if cells.len() <= col {
        // The cell itself was counted when it was read.
        extent.padding((col - cells.len()) as u64)?;
        cells.resize(col + 1, Cell::Empty);
    }
    if let Some(slot) = cells.get_mut(col) {
        *slot = cell;
    }
    Ok(())
}

/// One workbook value as a [`Cell`].
fn convert(data: &Data) -> Cell {
    match data {
        Data::Empty => Cell::Empty,
        Data::String(s) if s.is_empty() => Cell::Empty,
        Data::String(s) => Cell::judged_once(s),
        Data::Int(i) => Cell::Number(i.to_string()),
        Data::Float(f) => float_cell(*f),
        Data::Bool(_) => Cell::Invalid("a TRUE/FALSE value".to_owned()),
        Data::DateTime(dt) => {
            if dt.is_duration() {
                Cell::Invalid("a duration (a span of time), not a date".to_owned())
            } else {
                excel_date(dt)
            }
        }
        Data::DateTimeIso(s) => iso_date(s),
        Data::DurationIso(s) => Cell::Invalid(format!("the duration {}, not a date", echo(s))),
        Data::Error(e) => Cell::Invalid(format!("the error value {e}")),
    }
}

/// The shortest text that reads back as `f`. Rust's `Display` for `f64` never uses
/// exponent notation (`1e-7` prints as `0.0000001`), so the text is plain decimal.
pub(super) fn float_cell(f: f64) -> Cell {
    if f.is_finite() {
        Cell::Number(format!("{f}"))
    } else {
        Cell::Invalid("a number that is not finite".to_owned())
    }
}

/// An Excel serial date (days since the 1900 or 1904 epoch; the fraction is the time).
fn excel_date(dt: &calamine::ExcelDateTime) -> Cell {
    let serial = dt.as_f64();
    // Excel's calendar ends at 9999-12-31 (serial 2958465); calamine clamps values
    // outside it to an edge date, which would silently import a wrong date.
    if !serial.is_finite() || !(0.0..2_958_466.0).contains(&serial) {
        return Cell::Invalid("a date outside the calendar a spreadsheet supports".to_owned());
    }
    let (year, month, day, hour, minute, second, milli) = dt.to_ymd_hms_milli();
    if (hour, minute, second, milli) != (0, 0, 0, 0) {
        return Cell::Invalid("a date with a time of day".to_owned());
    }
    match NaiveDate::from_ymd_opt(i32::from(year), u32::from(month), u32::from(day)) {
        Some(date) => Cell::Date(date),
        // Serial 0 (1900-01-00) and Excel's phantom 1900-02-29 have no real date.
        None => Cell::Invalid(format!(
            "the date {year:04}-{month:02}-{day:02}, which does not exist"
        )),
    }
}

/// An ISO 8601 date cell (`<c t="d">`): `2026-11-20`, or with a midnight time.
pub(super) fn iso_date(text: &str) -> Cell {
    let (date_part, time_part) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let Ok(WireDate(date)) = WireDate::parse_dashed(date_part) else {
        return Cell::Invalid(format!("the date-time value '{}'", echo(text)));
    };
    match time_part {
        None => Cell::Date(date),
        Some(time) => {
            let time = time.trim_end_matches('Z');
            let midnight =
                !time.is_empty() && time.chars().all(|c| c == '0' || c == ':' || c == '.');
            if midnight {
                Cell::Date(date)
            } else {
                Cell::Invalid("a date with a time of day".to_owned())
            }
        }
    }
}
