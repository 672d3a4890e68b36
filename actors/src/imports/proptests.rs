//! Property tests of the bounds: whatever the bytes, the readers never panic, answer
//! `Ok` or 400 / 40001, and never hand on a row past the sheet or more cells than the
//! cap; the validator never panics and lists at most 1,000 errors. Case counts are
//! modest so `cargo test -p iq-actors` stays quick in debug builds.

use proptest::prelude::*;

use super::bounds::{ImportLimits, MAX_COLUMNS, MAX_LISTED_ERRORS, MAX_ROWS};
use super::validate::{ImportReference, Validator};
use super::workbook::tests::{sample_rows, with_sheet_xml};
use super::workbook::{read_rows, Cell, FileKind, SheetRow};
use super::write::{to_csv, to_xlsx};
use crate::ErrorCode;

/// Small enough for a few-kilobyte file to reach it.
const MAX_CELLS: u64 = 2_000;

/// Reads `bytes` and checks every property of the answer.
fn holds_bounds(kind: FileKind, bytes: &[u8]) -> Result<(), TestCaseError> {
    let limits = ImportLimits {
        max_cells: MAX_CELLS,
        max_entry_bytes: 1 << 20,
    };
    let mut rows = 0u64;
    let mut cells = 0u64;
    let mut last = 0u32;
    let mut bad_row = None;
    let result = read_rows(kind, bytes, &limits, &mut |row| {
        let ordered = row.number > last;
        last = row.number;
        rows += 1;
        cells += row.cells.len() as u64;
        let within = row.number >= 1
            && row.number <= MAX_ROWS
            && row.cells.len() <= MAX_COLUMNS as usize
            && row.cells.iter().any(|c| *c != Cell::Empty);
        if !(within && ordered) && bad_row.is_none() {
            bad_row = Some((row.number, row.cells.len()));
        }
        true
    });
    prop_assert_eq!(bad_row, None);
    // Every row handed on holds a cell read, and the cells read are capped. A workbook
    // row is padded to its last cell's column (at most 16,384, checked above); a CSV
    // record is handed on as read.
    prop_assert!(rows <= MAX_CELLS, "{} rows handed on", rows);
    if kind == FileKind::Csv {
        prop_assert!(cells <= MAX_CELLS, "{} cells handed on", cells);
    }
    if let Err(error) = result {
        prop_assert_eq!(error.code, ErrorCode::InvalidRequest, "{}", error.message);
        prop_assert!(error.message.chars().count() < 600, "{}", error.message);
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, bits)| Mutation::Flip(at, bits)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        any::<usize>().prop_map(Mutation::Delete),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len();
        match *m {
            Mutation::Flip(at, bits) if len > 0 => bytes[at % len] ^= bits,
            Mutation::Insert(at, byte) => bytes.insert(at % (len + 1), byte),
            Mutation::Delete(at) if len > 0 => {
                bytes.remove(at % len);
            }
            _ => {}
        }
    }
    bytes
}

/// Bytes that are mostly CSV structure (mapped from plain bytes: a strategy per byte
/// would make generating the cases the slow part).
fn csv_bytes() -> impl Strategy<Value = Vec<u8>> {
    const ALPHABET: &[u8] = b",,,,\"\"\n\n\raaaa1.\0\xC3\xA4";
    proptest::collection::vec(any::<u8>(), 0..4096).prop_map(|bytes| {
        bytes
            .into_iter()
            .map(|b| match ALPHABET.get(usize::from(b)) {
                Some(&mapped) => mapped,
                None => b,
            })
            .collect()
    })
}

/// A cell reference: column letters (up to ten, past any column) and row digits (up
/// to thirteen, past any row), or something that is not a reference at all.
fn reference() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => ("[A-Z]{1,10}", "[1-9][0-9]{0,12}").prop_map(|(c, r)| format!("{c}{r}")),
        1 => "[A-Za-z0-9:$]{0,12}",
    ]
}

/// A sheet XML edit: a cell with a random reference in a row, a new row, a declared
/// range.
#[derive(Debug, Clone)]
enum SheetEdit {
    Cell(String),
    Row(String, String),
    Dimension(String, String),
}

fn sheet_edit() -> impl Strategy<Value = SheetEdit> {
    prop_oneof![
        reference().prop_map(SheetEdit::Cell),
        ("[0-9]{1,12}", reference()).prop_map(|(r, c)| SheetEdit::Row(r, c)),
        (reference(), reference()).prop_map(|(a, b)| SheetEdit::Dimension(a, b)),
    ]
}

fn apply(xml: &str, edit: &SheetEdit) -> String {
    let cell = |r: &str| format!("<c r=\"{r}\" t=\"inlineStr\"><is><t>v</t></is></c>");
    match edit {
        SheetEdit::Cell(r) => xml.replacen("</row>", &format!("{}</row>", cell(r)), 1),
        SheetEdit::Row(n, r) => xml.replace(
            "</sheetData>",
            &format!("<row r=\"{n}\">{}</row></sheetData>", cell(r)),
        ),
        SheetEdit::Dimension(a, b) => xml.replace(
            "<dimension ref=\"A1:E3\"/>",
            &format!("<dimension ref=\"{a}:{b}\"/>"),
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn csv_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        holds_bounds(FileKind::Csv, &bytes)?;
    }

    #[test]
    fn csv_structured_bytes(bytes in csv_bytes()) {
        holds_bounds(FileKind::Csv, &bytes)?;
    }

    #[test]
    fn csv_mutated(mutations in proptest::collection::vec(mutation(), 1..16)) {
        holds_bounds(FileKind::Csv, &mutate(to_csv(&sample_rows()), &mutations))?;
    }

    #[test]
    fn validator_arbitrary_rows(
        header in any::<bool>(),
        rows in proptest::collection::vec(sheet_row(), 0..400),
    ) {
        // The rows are generated cheaply (see `cell`), so 256 cases stay quick. With a
        // good header first, the data rows are judged and may pass 1,000 problems.
        let reference = validator_reference();
        let mut validator = Validator::new(&reference);
        if header {
            validator.row(&SheetRow {
                number: 1,
                cells: VALUES[..5].iter().map(|v| Cell::Text((*v).to_owned())).collect(),
            });
        }
        for row in &rows {
            validator.row(row);
        }
        if let Err(rejection) = validator.finish() {
            prop_assert!(rejection.errors.len() <= MAX_LISTED_ERRORS);
            prop_assert!(
                rejection.errors.len() == rejection.total.min(MAX_LISTED_ERRORS),
                "{} listed of {}", rejection.errors.len(), rejection.total
            );
            prop_assert!(!rejection.errors.is_empty());
            prop_assert!(rejection.total >= rejection.errors.len());
            let order: Vec<u32> = rejection.errors.iter().map(|e| e.row).collect();
            prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "{:?}", order);
            for error in &rejection.errors {
                // 50 echoed characters, a column letter or two, the fixed words.
                prop_assert!(error.reason.chars().count() < 400, "{}", error.reason);
                prop_assert!(error.column.chars().count() <= 51, "{}", error.column);
            }
        }
    }
}

proptest! {
    // Each case opens a workbook: fewer of them.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn xlsx_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        holds_bounds(FileKind::Xlsx, &bytes)?;
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend_from_slice(&bytes);
        holds_bounds(FileKind::Xlsx, &zip)?;
    }

    #[test]
    fn xlsx_mutated(mutations in proptest::collection::vec(mutation(), 1..8)) {
        let bytes = to_xlsx(&sample_rows()).map_err(|e| TestCaseError::fail(e.message))?;
        holds_bounds(FileKind::Xlsx, &mutate(bytes, &mutations))?;
    }

    #[test]
    fn xlsx_sheet_xml_edited(edits in proptest::collection::vec(sheet_edit(), 1..4)) {
        let bytes = to_xlsx(&sample_rows()).map_err(|e| TestCaseError::fail(e.message))?;
        let edited = with_sheet_xml(&bytes, |xml| {
            edits.iter().fold(xml.to_owned(), |xml, edit| apply(&xml, edit))
        });
        holds_bounds(FileKind::Xlsx, &edited)?;
    }

    #[test]
    fn xlsx_sheet_xml_mutated(mutations in proptest::collection::vec(mutation(), 1..8)) {
        let bytes = to_xlsx(&sample_rows()).map_err(|e| TestCaseError::fail(e.message))?;
        let edited = with_sheet_xml(&bytes, |xml| {
            let mutated = mutate(xml.as_bytes().to_vec(), &mutations);
            String::from_utf8_lossy(&mutated).into_owned()
        });
        holds_bounds(FileKind::Xlsx, &edited)?;
    }
}

fn validator_reference() -> ImportReference {
    ImportReference {
        quote_indexes: ["GPU_Index".to_owned()].into_iter().collect(),
        open_days: [chrono::NaiveDate::from_ymd_opt(2026, 11, 20).expect("date")]
            .into_iter()
            .collect(),
        calculated_indexes: ["Hardware_Index".to_owned()].into_iter().collect(),
        today: chrono::NaiveDate::MAX,
    }
}

/// Values a cell may hold: the header names, good values, near misses, NUL, long ones.
const VALUES: [&str; 16] = [
    "trade_date",
    "index_code",
    "specification",
    "weight",
    "price",
    "20261120",
    "GPU_Index",
    "gpu_index",
    "0.5",
    "1",
    "2.5E+11",
    "-0.000000001",
    "B200\0",
    "",
    " ",
    "é中",
];

/// One cell from a few plain numbers: a strategy per kind of cell would make
/// generating the cases the slow part in a debug build.
fn cell(kind: u8, pick: u8, length: u16) -> Cell {
    let value = VALUES[usize::from(pick) % VALUES.len()];
    match kind % 8 {
        0 | 1 => Cell::Empty,
        2..=4 => Cell::Text(value.to_owned()),
        // Around the 500-character bound, and past the 50 echoed.
        5 => Cell::Text(value.repeat(usize::from(length % 700) / value.len().max(1))),
        6 => Cell::Number(value.to_owned()),
        _ => match pick % 3 {
            0 => Cell::Invalid("a TRUE/FALSE value".to_owned()),
            1 => Cell::Date(chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap_or_default()),
            _ => Cell::Number("9".repeat(usize::from(length % 400))),
        },
    }
}

fn sheet_row() -> impl Strategy<Value = SheetRow> {
    (
        1u32..2_000,
        proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u16>()), 0..8),
    )
        .prop_map(|(number, cells)| SheetRow {
            number,
            cells: cells.into_iter().map(|(k, p, l)| cell(k, p, l)).collect(),
        })
}
