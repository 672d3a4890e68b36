//! A quote file's cells: `.xlsx` (first sheet) or `.csv`, read into one shape (writing
//! quote files is [`super::write`]).
//!
//! This module only turns bytes into typed cells with their real spreadsheet row
//! numbers; it judges no business rule (that is [`super::validate`]). It must never:
//!
//! - do arithmetic on a number: a numeric cell is kept as decimal *text* (the shortest
//!   text that reads back as the stored IEEE double, so `0.1` stays `"0.1"`), and the
//!   validator parses that text as a `Decimal`;
//! - trim, case-fold or otherwise alter a text cell (specification names are kept
//!   exactly as entered);
//! - panic on any input: an unreadable file is a 400 / 40001 with a message saying why,
//!   and a cell without a usable value is a [`Cell::Invalid`] that the validator
//!   reports with its row;
//! - allocate by a number read from the file: every cell position and CSV record is
//!   checked against the sheet limits (1,048,576 rows x 16,384 columns) and the cell
//!   count against [`ImportLimits::max_cells`] by [`Extent`] before anything is
//!   allocated for it, a workbook's declared dimension before its cells are read, and
//!   the archive itself ([`super::archive`]) before calamine opens it. Past a bound the
//!   file is refused whole, 400 / 40001 (D8, quoted in [`super::bounds`]);
//! - quote more than [`ECHO_CHARS`] characters of a value in a message
//!   ([`echo`]).

use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};

use calamine::{open_workbook_from_rs, Data, DataRef, Reader, Xlsx, XlsxError};
use chrono::NaiveDate;

use super::archive;
#[cfg(doc)]
use super::bounds::ECHO_CHARS;
use super::bounds::{check_declared, echo, library_error, Extent, ImportLimits, MAX_COLUMNS};
use crate::ApiError;

/// The two accepted file types, told by the file name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Csv,
    Xlsx,
}

impl FileKind {
    /// `.csv` or `.xlsx`, in any letter case; anything else is `None`.
    pub fn of_name(file_name: &str) -> Option<FileKind> {
        let lower = file_name.to_ascii_lowercase();
        if lower.ends_with(".csv") {
            Some(FileKind::Csv)
        } else if lower.ends_with(".xlsx") {
            Some(FileKind::Xlsx)
        } else {
            None
        }
    }
}

/// One cell as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Empty,
    Text(String),
    /// A numeric cell, as the shortest decimal text that reads back as the same number.
    Number(String),
    /// A date cell of a workbook.
    Date(NaiveDate),
    /// A cell that holds no usable value (an error value, a formula with no result).
    /// The text is a noun phrase a business user understands ("a TRUE/FALSE value");
    /// any value from the file it quotes is cut by [`echo`].
    Invalid(String),
}

impl Cell {
    fn is_empty(&self) -> bool {
        matches!(self, Cell::Empty)
    }
}

/// A row with its number as the spreadsheet shows it (the header is row 1).
///
/// `cells[i]` is the sheet's column `i` (0 = column A): a workbook whose table starts
/// further right has leading [`Cell::Empty`] cells, so positions name real columns.
/// A row read from a file has at most 16,384 cells and a number of at most 1,048,576.
#[derive(Debug, Clone, PartialEq)]
pub struct SheetRow {
    pub number: u32,
    pub cells: Vec<Cell>,
}

/// Every row of the file, header first; fully blank rows are left out (for tests: an
/// import reads a file row by row, with [`read_rows`]).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sheet {
    pub rows: Vec<SheetRow>,
}

/// The invalid-cell phrase for a formula whose result was never stored.
const UNCALCULATED_FORMULA: &str = "a formula without a computed value (save the file from a \
     spreadsheet application that calculates it)";

/// Refuses a file whose first bytes plainly say it is not of its kind (an import makes
/// this check before it takes a connection; reading the file finds any other damage).
pub fn sniff(kind: FileKind, bytes: &[u8]) -> Result<(), ApiError> {
    match kind {
        // A workbook renamed to .csv would otherwise fail as "not UTF-8" on some line,
        // which does not tell the user what to do.
        FileKind::Csv if bytes.starts_with(ZIP_MAGIC) => Err(ApiError::invalid(
            "the file is not a CSV text file but looks like an .xlsx workbook: upload it with \
             the .xlsx extension, or save it as CSV UTF-8",
        )),
        // An OLE file may be an encrypted workbook, which calamine tells apart.
        FileKind::Xlsx
            if !bytes.is_empty()
                && !bytes.starts_with(ZIP_MAGIC)
                && !bytes.starts_with(OLE_MAGIC) =>
        {
            Err(ApiError::invalid(NOT_XLSX))
        }
        _ => Ok(()),
    }
}

/// Reads a whole file under the default limits (for tests); an unreadable one is
/// 400 / 40001 with a message saying why.
#[cfg(test)]
pub fn read(kind: FileKind, bytes: &[u8]) -> Result<Sheet, ApiError> {
    read_with(kind, bytes, &ImportLimits::default())
}

/// [`read`] under `limits`.
#[cfg(test)]
pub fn read_with(kind: FileKind, bytes: &[u8], limits: &ImportLimits) -> Result<Sheet, ApiError> {
    let mut sheet = Sheet::default();
    read_rows(kind, bytes, limits, &mut |row| {
        sheet.rows.push(row);
        true
    })?;
    Ok(sheet)
}

/// Reads a file row by row, without holding it: `each` gets every row
/// that is not fully blank, header first, in sheet order, as soon as the row is
/// complete; when it returns `false` the read stops there. An import validates and
/// stores the rows read so far while the rest of the file is still being parsed.
///
/// A file past one of `limits` or of the sheet limits is refused, 400 / 40001, when
/// the bound is met: before any row if the file declares it (a workbook's dimension,
/// an archive part's size, a CSV's shape, which a pre-scan finds), otherwise at the
/// first cell past it, after `each` had the rows before.
pub fn read_rows(
    kind: FileKind,
    bytes: &[u8],
    limits: &ImportLimits,
    each: &mut dyn FnMut(SheetRow) -> bool,
) -> Result<(), ApiError> {
    sniff(kind, bytes)?;
    match kind {
        FileKind::Csv => read_csv(bytes, limits, each),
        FileKind::Xlsx => read_xlsx(bytes, limits, each),
    }
}

// ---------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------

fn read_csv(
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
                Cell::Text(text.to_owned())
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

/// Hands a row on unless every cell is empty; `false` when the reader should stop.
fn emit(each: &mut dyn FnMut(SheetRow) -> bool, number: u32, cells: Vec<Cell>) -> bool {
    if cells.iter().any(|c| !c.is_empty()) {
        each(SheetRow { number, cells })
    } else {
        true
    }
}

// ---------------------------------------------------------------------------------
// XLSX
// ---------------------------------------------------------------------------------

fn read_xlsx(
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
        let cell = match record.value {
            // Most quote cells are text; take them without a copy through `Data`.
            DataRef::SharedString(text) if !text.is_empty() => Cell::Text(text.to_owned()),
            DataRef::String(text) if !text.is_empty() => Cell::Text(text),
            value => convert(&Data::from(value)),
        };
        let cell = if !cell.is_empty() {
            cell
        } else if record.formula.is_some() {
            // A formula cell whose result was never stored reads as empty: without this
            // check a workbook written by a tool that does not calculate would lose
            // quotes silently.
            Cell::Invalid(UNCALCULATED_FORMULA.to_owned())
        } else {
            continue;
        };
        let cells = match &mut current {
            Some((number, cells)) if *number == row => cells,
            Some((number, _)) if *number > row => {
                return Err(ApiError::invalid(format!(
                    "the first sheet '{name}' lists row {} after row {}: its rows are out of \
                     order; open it in a spreadsheet application and save it again",
                    row.saturating_add(1),
                    number.saturating_add(1)
                )));
            }
            _ => {
                if let Some((number, cells)) = current.take() {
                    if !emit(each, number.saturating_add(1), cells) {
                        return Ok(());
                    }
                }
                &mut current.insert((row, Vec::new())).1
            }
        };
        put(cells, col, cell, &mut extent)?;
    }
    if let Some((number, cells)) = current {
        emit(each, number.saturating_add(1), cells);
    }
    Ok(())
}

/// The start of an OLE compound file: an `.xls` workbook, or an encrypted `.xlsx`.
const OLE_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
/// The start of a zip archive, which an `.xlsx` workbook is.
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const NOT_XLSX: &str =
    "the file is not an .xlsx workbook, or it is damaged: save it again as an Excel workbook \
     (.xlsx)";

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
        Data::String(s) => Cell::Text(s.clone()),
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
fn float_cell(f: f64) -> Cell {
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
fn iso_date(text: &str) -> Cell {
    let (date_part, time_part) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let Ok(date) = NaiveDate::parse_from_str(date_part, "%Y-%m-%d") else {
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

#[cfg(test)]
#[path = "workbook_tests.rs"]
pub(crate) mod tests;
