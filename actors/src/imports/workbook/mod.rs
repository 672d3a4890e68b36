//! A quote file's cells: `.xlsx` (first sheet) or `.csv`, read into one shape (writing
//! quote files is [`super::write`]). Here: the shapes ([`Cell`], [`SheetRow`]), the
//! first-bytes check ([`sniff`]) and the entry point ([`read_rows`]); the CSV reader is
//! `csv_file.rs`, the workbook reader `xlsx_file.rs`.
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
//!   ([`echo`]);
//! - copy a text before judging it ([`Cell::judged`]): a shared string of a hundred
//!   megabytes referenced by every cell of a row would otherwise be copied per cell.

mod csv_file;
mod xlsx_file;

use chrono::NaiveDate;

use super::bounds::{echo, text_bound, too_long_reason, ImportLimits, TextBound, NUL_REASON};
#[cfg(doc)]
use super::bounds::{Extent, ECHO_CHARS, MAX_CELL_CHARS};
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
    /// A text that breaks the bounds of any cell (too long, or holding NUL),
    /// in place of the text, which was never copied: the reason, ready to report, and
    /// the text as a message may show it ([`echo`]).
    OutOfBounds {
        reason: String,
        shown: String,
    },
}

impl Cell {
    fn is_empty(&self) -> bool {
        matches!(self, Cell::Empty)
    }

    /// A text cell from the file, judged by [`text_bound`] before it is copied: a text
    /// past a bound becomes [`Cell::OutOfBounds`], so what a row holds is at most
    /// [`MAX_CELL_CHARS`] characters a cell. `chars` counts the characters of a text too
    /// long to be read cheaply (the workbook reader counts a shared string once).
    fn judged(text: &str, chars: impl FnOnce(&str) -> usize) -> Cell {
        let reason = match text_bound(text) {
            TextBound::Within => return Cell::Text(text.to_owned()),
            TextBound::TooLong => too_long_reason(chars(text), text),
            TextBound::Nul => NUL_REASON.to_owned(),
        };
        Cell::OutOfBounds {
            reason,
            shown: echo(text).into_owned(),
        }
    }

    /// [`Cell::judged`] for a text read once from the file (a CSV field, an inline
    /// string), whose length is bounded by the file's.
    fn judged_once(text: &str) -> Cell {
        Cell::judged(text, |t| t.chars().count())
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
        FileKind::Csv => csv_file::read_csv(bytes, limits, each),
        FileKind::Xlsx => xlsx_file::read_xlsx(bytes, limits, each),
    }
}

/// Hands a row on unless every cell is empty; `false` when the reader should stop.
fn emit(each: &mut dyn FnMut(SheetRow) -> bool, number: u32, cells: Vec<Cell>) -> bool {
    if cells.iter().any(|c| !c.is_empty()) {
        each(SheetRow { number, cells })
    } else {
        true
    }
}

/// The start of an OLE compound file: an `.xls` workbook, or an encrypted `.xlsx`.
const OLE_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
/// The start of a zip archive, which an `.xlsx` workbook is.
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const NOT_XLSX: &str =
    "the file is not an .xlsx workbook, or it is damaged: save it again as an Excel workbook \
     (.xlsx)";

#[cfg(test)]
pub(crate) mod tests;
