//! An `.xlsx` archive, checked before calamine opens it (D8: "a zip entry that inflates
//! past a configured cap is refused whole with 400 / 40001 before it is read").
//!
//! - Every part (zip entry) whose inflated size, as the central directory declares it,
//!   exceeds [`ImportLimits::max_entry_bytes`] is refused by name, whether calamine
//!   would read it or not: a 2 MB workbook may hold a 2 GiB shared string.
//! - A part that lies, declaring less than it inflates to, cannot get past its
//!   declaration: the zip crate (9.x) fails a read as soon as the output grows past the
//!   declared size ("File is larger than its declared uncompressed size"), for calamine
//!   as for this check, so the declared size bounds what is inflated, and the lie reads
//!   as a damaged workbook. The tests hold the zip crate to that.
//! - The parts calamine holds whole while it opens a workbook are scanned here first,
//!   streaming, with constant memory: the shared strings, whose declared `uniqueCount`
//!   calamine reserves room for before it reads one (a 1 KB file could otherwise ask
//!   for terabytes and abort the process), and whose strings it keeps (their number
//!   is bounded by [`ImportLimits::max_cells`]); and the styles, where calamine clones
//!   a font name and a number format into every cell format, so a few kilobytes of
//!   long names and many cell formats would multiply into gigabytes.
//!
//! - Every part is inflated once here, to its end, so that the zip reader checks its
//!   CRC: calamine stops reading a part at its last element, and a damaged part would
//!   otherwise be read without complaint. All parts together may inflate to at most
//!   four times [`ImportLimits::max_entry_bytes`], which bounds that work.
//! - What calamine will hold for the whole read, the shared strings (their text and
//!   [`STRING_HELD_BYTES`] for each) and the styles' clones, is estimated from those
//!   scans and refused past [`ImportLimits::held_bytes`]: with one XML element
//!   buffered and a row of cells, that keeps a read within
//!   [`ImportLimits::read_budget`].
//!
//! Nothing here allocates by a number read from the file. A file that is not a zip
//! archive at all is left to calamine, which says why it is not a workbook. Here: which
//! parts are refused and why; the streaming count of an XML part is [`scanner`].

mod scanner;

use std::io::Cursor;

use zip::ZipArchive;

use super::bounds::{echo, library_error, ImportLimits};
use crate::ApiError;
use scanner::{scan, Tally};

/// few hundred bytes for each. Excel allows at most 64,000 cell formats of a few
/// elements each; a quote file has a few dozen elements.
const MAX_STYLE_ELEMENTS: u64 = 262_144;
/// Cell formats (`xf`) times the longest attribute value of the styles part: calamine
/// clones a font name and a number format, each an attribute value, into every cell
/// format, so what the clones take is at most twice this. Common workbooks stay far
/// below it (thousands of formats, values under a hundred bytes).
const MAX_STYLE_CLONED_BYTES: u64 = 64 * 1024 * 1024;

/// What calamine keeps for each shared string besides its text: the `String` (24
/// bytes), the allocator's rounding of its text, and the table's growth by doubling.
const STRING_HELD_BYTES: u64 = 64;

/// Refuses, with 400 / 40001, a workbook archive that breaks a bound; `Ok` for one
/// that may be opened, or that is not an archive at all.
pub fn check(bytes: &[u8], limits: &ImportLimits) -> Result<(), ApiError> {
    let Ok(mut archive) = ZipArchive::new(Cursor::new(bytes)) else {
        return Ok(());
    };
    let mut scans = Vec::new();
    let mut to_scan: u64 = 0;
    let mut inflated: u64 = 0;
    for index in 0..archive.len() {
        let entry = archive.by_index_data(index).map_err(|e| damaged("", &e))?;
        let name = entry.name().map_err(|e| damaged("", &e))?.into_owned();
        inflated = inflated.saturating_add(entry.size());
        if inflated > limits.max_entry_bytes.saturating_mul(4) {
            return Err(ApiError::invalid(format!(
                "the workbook's parts inflate to more than {} in all, four times the {} a \
                 part may take (IMPORT_MAX_ENTRY_MB); the file was not read",
                size_text(limits.max_entry_bytes.saturating_mul(4)),
                size_text(limits.max_entry_bytes)
            )));
        }
        if entry.size() > limits.max_entry_bytes {
            return Err(ApiError::invalid(format!(
                "the workbook's part '{}' inflates to {} bytes, more than the {} an import \
                 accepts; the file was not read",
                echo(&name),
                entry.size(),
                size_text(limits.max_entry_bytes)
            )));
        }
        // calamine looks parts up case-insensitively, `\` as `/`, under the folder the
        // package names: any part of these names may be the one it reads.
        let key = name.replace('\\', "/").to_ascii_lowercase();
        let part = match key.rsplit('/').next() {
            Some("sharedstrings.xml") => Part::SharedStrings,
            Some("styles.xml") => Part::Styles,
            _ => continue,
        };
        // A workbook has one of each; many would make this scan the slow part.
        to_scan = to_scan.saturating_add(entry.size());
        if to_scan > limits.max_entry_bytes.saturating_mul(2) {
            return Err(ApiError::invalid(format!(
                "the workbook holds more shared-string and style parts than a workbook has \
                 ('{}'); the file was not read",
                echo(&name)
            )));
        }
        scans.push((index, name, part));
    }
    let mut held: u64 = 0;
    for (index, name, part) in &scans {
        let tally = {
            let entry = archive.by_index(*index).map_err(|e| damaged(name, &e))?;
            // The scan reads the part to its end: the zip reader checks its CRC there.
            scan(entry, *part).map_err(|e| damaged(name, &e))?
        };
        part.judge(name, &tally, limits)?;
        held = held.saturating_add(part.held(&tally));
    }
    if held > limits.held_bytes() {
        return Err(ApiError::invalid(format!(
            "the workbook's shared strings and styles would take {} of memory to read, more \
             than the {} an import allows (twice IMPORT_MAX_ENTRY_MB); copy the quotes into a \
             new workbook, or save them as CSV",
            size_text(held),
            size_text(limits.held_bytes())
        )));
    }
    for index in 0..archive.len() {
        if scans.iter().any(|(scanned, _, _)| *scanned == index) {
            continue;
        }
        let mut entry = archive.by_index(index).map_err(|e| damaged("", &e))?;
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        std::io::copy(&mut entry, &mut std::io::sink()).map_err(|e| damaged(&name, &e))?;
    }
    Ok(())
}

/// A part calamine reads whole when it opens a workbook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    SharedStrings,
    Styles,
}

impl Part {
    /// What calamine holds of this part for the whole read, in bytes: the shared
    /// strings' text (at most the part's inflated size) and [`STRING_HELD_BYTES`] a
    /// string; a font name and a number format cloned into every cell format.
    fn held(self, tally: &Tally) -> u64 {
        match self {
            Part::SharedStrings => tally.bytes.saturating_add(
                tally
                    .sought
                    .max(tally.declared)
                    .saturating_mul(STRING_HELD_BYTES),
            ),
            Part::Styles => tally
                .sought
                .saturating_mul(tally.longest_value)
                .saturating_mul(2),
        }
    }

    fn judge(self, name: &str, tally: &Tally, limits: &ImportLimits) -> Result<(), ApiError> {
        if tally.doctype {
            return Err(ApiError::invalid(format!(
                "the workbook's part '{}' holds a document type declaration, which no \
                 spreadsheet application writes: save the file again as an Excel workbook \
                 (.xlsx)",
                echo(name)
            )));
        }
        match self {
            Part::SharedStrings => {
                let strings = tally.sought.max(tally.declared);
                if strings > limits.max_cells {
                    return Err(ApiError::invalid(format!(
                        "the workbook holds {strings} texts (part '{}'), more than the {} \
                         cells an import accepts; the file was not read",
                        echo(name),
                        limits.max_cells
                    )));
                }
            }
            Part::Styles => {
                let cloned = tally.sought.saturating_mul(tally.longest_value);
                if tally.elements > MAX_STYLE_ELEMENTS || cloned > MAX_STYLE_CLONED_BYTES {
                    return Err(ApiError::invalid(format!(
                        "the workbook's styles (part '{}') are larger than an import \
                         accepts: copy the quotes into a new workbook, or save them as CSV",
                        echo(name)
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `bytes` as a person reads it: MiB from one MiB up (whole where it is a whole number
/// of them), bytes below.
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB {
        let tenths = bytes.saturating_mul(10) / MIB;
        format!("{}.{} MiB", tenths / 10, tenths % 10)
    } else {
        format!("{bytes} bytes")
    }
}

fn damaged(part: &str, error: &dyn std::fmt::Display) -> ApiError {
    let part = if part.is_empty() {
        String::new()
    } else {
        format!(" (part '{}')", echo(part))
    };
    ApiError::invalid(format!(
        "the file is not a readable .xlsx workbook{part}: {}; save it again as an Excel \
         workbook (.xlsx)",
        library_error(error)
    ))
}
