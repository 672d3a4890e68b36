//! The bounds every quote import runs under, the endpoint's and the `import` command's
//! alike (D8):
//!
//! > Bounds, so that no file can exhaust the service: `errors` lists at most 1,000
//! > entries, in row order, and `errors_total` gives the full count; a cell longer than
//! > 500 characters is an error whose reason quotes at most its first 50; a cell holding
//! > NUL or a character PostgreSQL cannot store is an error of its row (422 / 40002,
//! > never 50000); a sheet whose declared or actual dimensions exceed 1,048,576 rows or
//! > 16,384 columns, or a zip entry that inflates past a configured cap, is refused
//! > whole with 400 / 40001 before it is read.
//!
//! What is bounded, and by whom:
//!
//! - the sheet, [`MAX_ROWS`] x [`MAX_COLUMNS`]: its declared `<dimension>` and every cell
//!   position or CSV record read, checked by [`Extent`] before anything is allocated
//!   for it (the readers never size anything by a number read from the file);
//! - the cells read, [`ImportLimits::max_cells`], every cell record counted, blank or
//!   not, and the blank cells a row is padded with, so the time of a read is bounded
//!   too;
//! - the inflated size of each part of a workbook, [`ImportLimits::max_entry_bytes`],
//!   and what calamine holds whole while it opens one (shared strings, styles):
//!   [`super::archive`], on the archive, before calamine opens it;
//! - one text cell, [`MAX_CELL_CHARS`] and NUL: judged by [`text_bound`] as the reader takes the cell from the file, before it copies it (a
//!   shared string referenced by many cells is judged, never copied, when it breaks a
//!   bound), and reported by the validator as an error of the cell's row; every value a
//!   reason or message quotes is cut by [`echo`] to [`ECHO_CHARS`];
//! - the memory a read of one file may take, [`ImportLimits::read_budget`]: derived
//!   from the limits above, and what the archive check holds a workbook to;
//! - the errors listed, [`MAX_LISTED_ERRORS`], by [`ErrorList`], with their total.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::validate::RowError;
pub use crate::safe_text::is_forbidden;
use crate::ApiError;

/// The most rows a sheet has (Excel's limit, which the file formats share).
pub const MAX_ROWS: u32 = 1_048_576;
/// The most columns a sheet has (column XFD).
pub const MAX_COLUMNS: u32 = 16_384;
/// The longest cell an import accepts, in characters; a longer one is a row error.
pub const MAX_CELL_CHARS: usize = 500;
/// The most characters of a value from the file that a reason or message quotes.
pub const ECHO_CHARS: usize = 50;
/// The most characters of a library's error text that a message passes on (it may
/// quote the file, a tag name for one).
pub const LIBRARY_ERROR_CHARS: usize = 200;
/// The most errors a rejected import lists; `errors_total` counts them all.
pub const MAX_LISTED_ERRORS: usize = 1_000;
/// A text longer than this many bytes has more than [`MAX_CELL_CHARS`] characters (a
/// character takes at most 4 bytes), so it is judged by its length alone.
const MAX_CELL_BYTES: usize = 4 * MAX_CELL_CHARS;
/// What a read holds besides the shared strings and one XML element: a row of cells
/// (at most 16,384 cells of at most [`MAX_CELL_BYTES`] bytes, 33 MiB), the styles'
/// clones and the readers' own buffers.
const READ_BUDGET_FIXED: u64 = 64 * 1024 * 1024;

/// The configurable bounds of one import (`IMPORT_MAX_CELLS`, `IMPORT_MAX_ENTRY_MB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportLimits {
    /// The most cells a file may hold: every cell record, blank ones included, and the
    /// blank cells a row is padded with before a cell further right (a row is handed
    /// on with a cell per column up to its last, so that is work and memory too); a
    /// CSV field is a cell. Past it the file is refused, 400 / 40001.
    pub max_cells: u64,
    /// The most bytes one part of an `.xlsx` archive may inflate to, as its central
    /// directory declares it (the zip reader fails a part that inflates past its
    /// declared size). Past it the file is refused before it is read, 400 / 40001.
    pub max_entry_bytes: u64,
}

impl ImportLimits {
    /// The most memory one read of a file may take, in bytes: `4 x max_entry_bytes +
    /// 64 MiB` (2.06 GiB at the defaults). Of it, what the workbook reader holds for the
    /// whole read (the shared strings, as the archive check counts them, and the styles'
    /// clones) is refused past [`ImportLimits::held_bytes`], twice `max_entry_bytes`; one
    /// XML element buffered and decoded takes at most twice its part, `max_entry_bytes`;
    /// the rest is [`READ_BUDGET_FIXED`]. A CSV read holds one record at a time and a
    /// row of judged cells. The tests measure a read's peak allocation against this.
    pub fn read_budget(&self) -> u64 {
        self.max_entry_bytes
            .saturating_mul(4)
            .saturating_add(READ_BUDGET_FIXED)
    }

    /// The most a workbook's reader may hold for the whole read: its shared strings and
    /// the styles' clones, as [`super::archive`] estimates them before the read.
    pub fn held_bytes(&self) -> u64 {
        self.max_entry_bytes.saturating_mul(2)
    }
}

impl Default for ImportLimits {
    /// - `max_cells` 10,000,000: a full-height sheet of the five D8 columns is
    ///   1,048,576 x 5 = 5.2 million cells; twice that leaves room for stray and
    ///   formatted cells, while a read stays within seconds (cells are streamed, so the
    ///   cap bounds time more than memory).
    /// - `max_entry_bytes` 512 MiB: the sheet XML of such a sheet, as spreadsheet
    ///   applications write it (about 200 bytes a row), is about 210 MB; 512 MiB is
    ///   more than twice that, and 2 GiB bombs are refused. The sheet XML is streamed,
    ///   but calamine holds the shared strings whole (up to this much text, plus some
    ///   56 bytes for each string, of which there are at most `max_cells`), and its
    ///   XML reader buffers one element or text whole: this cap sizes the memory an
    ///   import may take, a few times it at worst.
    fn default() -> Self {
        ImportLimits {
            max_cells: 10_000_000,
            max_entry_bytes: 512 * 1024 * 1024,
        }
    }
}

/// `value` as a reason or message quotes it: its first [`ECHO_CHARS`] characters, then
/// "…" if there were more (D8: "a reason quotes at most its first 50"). Every value
/// from a file that a reason echoes goes through here, header cells included. A NUL,
/// another control character or a bidirectional override ([`is_forbidden`]) shows as
/// U+FFFD: a message is stored with the import's record (PostgreSQL refuses NUL in
/// text) and shown on pages and in terminals.
pub fn echo(value: &str) -> Cow<'_, str> {
    cut(value, ECHO_CHARS)
}

/// A library's error text as a message passes it on: at most [`LIBRARY_ERROR_CHARS`]
/// characters.
pub fn library_error(error: &dyn std::fmt::Display) -> String {
    cut(&error.to_string(), LIBRARY_ERROR_CHARS).into_owned()
}

fn cut(text: &str, chars: usize) -> Cow<'_, str> {
    // No more bytes than characters allowed: nothing to count (most values).
    let end = if text.len() <= chars {
        None
    } else {
        text.char_indices().nth(chars).map(|(at, _)| at)
    };
    let kept = text.get(..end.unwrap_or(text.len())).unwrap_or_default();
    let clean = if kept.contains(is_forbidden) {
        Cow::Owned(kept.replace(is_forbidden, "\u{FFFD}"))
    } else {
        Cow::Borrowed(kept)
    };
    match end {
        None => clean,
        Some(_) => Cow::Owned(format!("{clean}…")),
    }
}

/// A text cell against the bounds of any cell (D8), judged by [`text_bound`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextBound {
    Within,
    /// More than [`MAX_CELL_CHARS`] characters.
    TooLong,
    /// A NUL, which PostgreSQL cannot store in text.
    Nul,
}

/// Judges a text cell at a cost bounded by [`MAX_CELL_BYTES`], whatever its length: a
/// longer text is too long by its byte length alone and is not read, so a shared string
/// of hundreds of megabytes referenced by many cells costs nothing per reference.
pub fn text_bound(text: &str) -> TextBound {
    if text.len() > MAX_CELL_BYTES {
        return TextBound::TooLong;
    }
    // The length comes first: a 600-character cell is that problem, whatever else.
    if text.len() > MAX_CELL_CHARS && text.chars().count() > MAX_CELL_CHARS {
        TextBound::TooLong
    } else if text.as_bytes().contains(&0) {
        TextBound::Nul
    } else {
        TextBound::Within
    }
}

/// The reason for a text of `chars` characters past [`MAX_CELL_CHARS`] (D8: "a cell
/// longer than 500 characters is an error whose reason quotes at most its first 50").
pub fn too_long_reason(chars: usize, text: &str) -> String {
    format!(
        "the cell holds {chars} characters, more than the {MAX_CELL_CHARS} a cell may hold: \
         '{}'",
        echo(text)
    )
}

/// The reason for a text holding NUL.
pub const NUL_REASON: &str =
    "the cell holds a NUL character (code 0), which cannot be stored: remove it";

/// `0` -> `A`, `25` -> `Z`, `26` -> `AA`, as the spreadsheet labels columns (any
/// index: a message may name a column past the last one).
pub fn column_letter(index: u64) -> String {
    let mut n = index;
    let mut letters = Vec::new();
    loop {
        // `n % 26` is below 26, so the byte is an ASCII capital.
        letters.push(b'A' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

/// Refuses a sheet whose declared range (calamine's `Dimensions`, 0-based, as the
/// `<dimension ref>` says it) reaches past the last row or column. The declared range
/// is a bounding box that a real sheet may fill only sparsely, so only the hard sheet
/// limits apply to it; [`ImportLimits::max_cells`] applies to the cells actually read.
pub fn check_declared(sheet: &str, start: (u32, u32), end: (u32, u32)) -> Result<(), ApiError> {
    let last_row = start.0.max(end.0);
    let last_column = start.1.max(end.1);
    if last_row < MAX_ROWS && last_column < MAX_COLUMNS {
        return Ok(());
    }
    let at = |(row, column): (u32, u32)| {
        format!("{}{}", column_letter(u64::from(column)), u64::from(row) + 1)
    };
    Err(ApiError::invalid(format!(
        "the first sheet '{}' declares the range {}:{}, larger than a sheet can be \
         ({MAX_ROWS} rows, {MAX_COLUMNS} columns); the file was not read",
        echo(sheet),
        at(start),
        at(end)
    )))
}

/// What a reader has read so far, against the bounds: each cell position or record is
/// checked here before the reader allocates anything for it.
#[derive(Debug)]
pub struct Extent {
    max_cells: u64,
    cells: u64,
}

impl Extent {
    pub fn new(limits: &ImportLimits) -> Extent {
        Extent {
            max_cells: limits.max_cells,
            cells: 0,
        }
    }

    /// One workbook cell at 0-based `(row, column)`, as the sheet XML places it.
    pub fn cell(&mut self, row: u32, column: u32) -> Result<(), ApiError> {
        self.count(1)?;
        check_row(u64::from(row) + 1)?;
        if column >= MAX_COLUMNS {
            return Err(ApiError::invalid(format!(
                "the file is larger than a sheet can be: row {} has a cell in column {} \
                 ({}), past the last column, {MAX_COLUMNS} (XFD)",
                u64::from(row) + 1,
                u64::from(column) + 1,
                column_letter(u64::from(column))
            )));
        }
        Ok(())
    }

    /// `cells` blank cells a workbook row is padded with, before a cell further right.
    pub fn padding(&mut self, cells: u64) -> Result<(), ApiError> {
        self.count(cells)
    }

    /// One CSV record of `fields` fields on the sheet row `number` (1-based).
    pub fn record(&mut self, number: u64, fields: u64) -> Result<(), ApiError> {
        check_row(number)?;
        if fields > u64::from(MAX_COLUMNS) {
            return Err(ApiError::invalid(format!(
                "the file is larger than a sheet can be: row {number} has {fields} fields, \
                 more than the {MAX_COLUMNS} columns a sheet has"
            )));
        }
        self.count(fields)
    }

    fn count(&mut self, cells: u64) -> Result<(), ApiError> {
        self.cells = self.cells.saturating_add(cells);
        if self.cells > self.max_cells {
            return Err(ApiError::invalid(format!(
                "the file has more than {} cells, the most an import accepts",
                self.max_cells
            )));
        }
        Ok(())
    }
}

/// The sheet row `number` (1-based) exists on a sheet.
fn check_row(number: u64) -> Result<(), ApiError> {
    if number > u64::from(MAX_ROWS) {
        return Err(ApiError::invalid(format!(
            "the file is larger than a sheet can be: it has a row {number}, past the last \
             row, {MAX_ROWS}"
        )));
    }
    Ok(())
}

/// The errors of a rejected import, bounded: the [`MAX_LISTED_ERRORS`] first in row
/// order (D8: "`errors` lists at most 1,000 entries, in row order, and `errors_total`
/// gives the full count"), and the count of all.
///
/// Errors do not arrive in row order (a weight sum is judged after the last row, for
/// rows anywhere in the file), so the kept ones are a max-heap of the smallest so far:
/// a new error that sorts before the largest kept one replaces it. The order is row,
/// then the rank the caller gives (the D8 column order), then the order found.
#[derive(Debug, Default)]
pub struct ErrorList {
    kept: BinaryHeap<Ranked>,
    total: usize,
}

#[derive(Debug)]
struct Ranked {
    key: (u32, usize, usize),
    error: RowError,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

impl ErrorList {
    /// Problems found so far, listed or not.
    pub fn total(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Whether an error of `row` and `rank` found now would be listed: the caller need
    /// not build the reason of one that would not.
    pub fn would_list(&self, row: u32, rank: usize) -> bool {
        self.kept.len() < MAX_LISTED_ERRORS
            || self
                .kept
                .peek()
                .is_some_and(|largest| (row, rank) < (largest.key.0, largest.key.1))
    }

    /// Counts one error and keeps it if it is among the first; `error` is built only
    /// then.
    pub fn add_with(&mut self, row: u32, rank: usize, error: impl FnOnce() -> RowError) {
        let listed = self.would_list(row, rank);
        // The order found breaks ties, so errors of one cell keep the order they came in.
        let key = (row, rank, self.total);
        self.total = self.total.saturating_add(1);
        if !listed {
            return;
        }
        if self.kept.len() >= MAX_LISTED_ERRORS {
            self.kept.pop();
        }
        self.kept.push(Ranked {
            key,
            error: error(),
        });
    }

    /// Counts and maybe keeps `error`.
    pub fn add(&mut self, rank: usize, error: RowError) {
        self.add_with(error.row, rank, || error);
    }

    /// The listed errors in order, and the total.
    pub fn into_sorted(self) -> (Vec<RowError>, usize) {
        let listed = self
            .kept
            .into_sorted_vec()
            .into_iter()
            .map(|ranked| ranked.error)
            .collect();
        (listed, self.total)
    }
}
