//! Sheet dimensions: cell references past the last column or row, a declared range past
//! the sheet, cells past the cap (both formats), padded rows, CSV records wider than a
//! sheet, millions of junk CSV lines.

use crate::imports::bounds::{ImportLimits, MAX_COLUMNS, MAX_ROWS};
use crate::imports::workbook::tests::{sample_rows, with_sheet_xml};
use crate::imports::workbook::{read, read_rows, read_with, Cell, FileKind};
use crate::imports::write::to_csv;
use crate::ApiError;

use super::{refused, refused_xlsx, sample_xlsx, with_cell_in_row_1};

/// The refusal of `bytes` read row by row, which must be 40001, and how many rows were
/// handed on before it.
fn refused_rows(kind: FileKind, bytes: &[u8], what: &str) -> (ApiError, usize) {
    let mut rows = 0;
    let error = read_rows(kind, bytes, &ImportLimits::default(), &mut |_| {
        rows += 1;
        true
    })
    .expect_err(what);
    assert_eq!(error.code.as_u32(), 40001);
    (error, rows)
}

fn inline(reference: &str) -> String {
    format!("<c r=\"{reference}\" t=\"inlineStr\"><is><t>x</t></is></c>")
}

#[test]
fn a_cell_in_column_lxqeasv_is_refused_before_anything_is_allocated() {
    // Before the bound, `put` resized row 1 to four billion cells: an abort.
    let bytes = with_cell_in_row_1(&inline("LXQEASV1"));
    let (error, rows) = refused_rows(FileKind::Xlsx, &bytes, "refused");
    assert!(
        error.message.contains("row 1 has a cell in column"),
        "{}",
        error.message
    );
    assert!(error.message.contains("LXQEASV"), "{}", error.message);
    assert!(error.message.contains("16384 (XFD)"), "{}", error.message);
    assert_eq!(rows, 0, "row 1 is refused before it is handed on");
}

#[test]
fn a_cell_at_zzzzzz4294967295_is_refused() {
    let bytes = with_sheet_xml(&sample_xlsx(), |xml| {
        xml.replace(
            "</sheetData>",
            &format!(
                "<row r=\"4294967295\">{}</row></sheetData>",
                inline("ZZZZZZ4294967295")
            ),
        )
    });
    let message = refused_xlsx(&bytes);
    assert!(
        message.contains("a row 4294967295, past the last row, 1048576"),
        "{message}"
    );
}

#[test]
fn the_last_row_and_column_are_fine_and_one_past_is_refused() {
    // XFD1048576 is the last cell of a sheet.
    let bytes = with_sheet_xml(&sample_xlsx(), |xml| {
        xml.replace(
            "</sheetData>",
            &format!(
                "<row r=\"1048576\">{}</row></sheetData>",
                inline("XFD1048576")
            ),
        )
    });
    let sheet = read(FileKind::Xlsx, &bytes).expect("the last cell is on the sheet");
    let last = sheet.rows.last().expect("a row");
    assert_eq!(last.number, MAX_ROWS);
    assert_eq!(last.cells.len(), MAX_COLUMNS as usize);
    assert_eq!(last.cells.last(), Some(&Cell::Text("x".into())));

    for reference in ["XFE1", "A1048577"] {
        let row = reference.trim_start_matches(char::is_alphabetic);
        let bytes = with_sheet_xml(&sample_xlsx(), |xml| {
            xml.replace(
                "</sheetData>",
                &format!("<row r=\"{row}\">{}</row></sheetData>", inline(reference)),
            )
        });
        refused_xlsx(&bytes);
    }
}

#[test]
fn references_past_any_number_are_a_damaged_file_not_a_panic() {
    // Ten letters overflow calamine's column arithmetic, twelve digits its row's: a
    // panic with overflow checks, a wrapped position without; 40001 either way.
    for reference in ["AAAAAAAAAA1", "A999999999999"] {
        refused_xlsx(&with_cell_in_row_1(&inline(reference)));
    }
}

#[test]
fn a_declared_range_past_the_sheet_is_refused_before_any_row() {
    for range in ["A1:XFE3", "A1:E1048577", "A1:ZZZZZZ4294967295"] {
        let bytes = with_sheet_xml(&sample_xlsx(), |xml| {
            xml.replace(
                "<dimension ref=\"A1:E3\"/>",
                &format!("<dimension ref=\"{range}\"/>"),
            )
        });
        let (error, rows) = refused_rows(FileKind::Xlsx, &bytes, range);
        assert!(
            error.message.contains("declares the range"),
            "{}",
            error.message
        );
        assert_eq!(rows, 0, "{range}");
    }
    // A declared range is a bounding box: the whole sheet is a range a sheet can have.
    let bytes = with_sheet_xml(&sample_xlsx(), |xml| {
        xml.replace(
            "<dimension ref=\"A1:E3\"/>",
            "<dimension ref=\"A1:XFD1048576\"/>",
        )
    });
    assert_eq!(
        read(FileKind::Xlsx, &bytes).expect("readable").rows.len(),
        3
    );
}

#[test]
fn cells_past_the_cap_are_refused_in_both_formats() {
    // The sample is 3 rows of 5 cells.
    let cap = |max_cells| ImportLimits {
        max_cells,
        ..ImportLimits::default()
    };
    for (kind, bytes) in [
        (FileKind::Xlsx, sample_xlsx()),
        (FileKind::Csv, to_csv(&sample_rows())),
    ] {
        assert_eq!(
            read_with(kind, &bytes, &cap(15))
                .expect("15 cells")
                .rows
                .len(),
            3
        );
        let message = refused(kind, &bytes, &cap(14));
        assert_eq!(
            message,
            "the file has more than 14 cells, the most an import accepts"
        );
    }
}

#[test]
fn the_blank_cells_a_row_is_padded_with_count_as_cells() {
    // A cell at XFD on every row is one cell read but 16,384 in the row handed on.
    let bytes = with_cell_in_row_1(&inline("XFD1"));
    let limits = |max_cells| ImportLimits {
        max_cells,
        ..ImportLimits::default()
    };
    let sheet = read_with(FileKind::Xlsx, &bytes, &limits(16_384 + 10)).expect("readable");
    assert_eq!(sheet.rows[0].cells.len(), MAX_COLUMNS as usize);
    let message = refused(FileKind::Xlsx, &bytes, &limits(16_384));
    assert_eq!(
        message,
        "the file has more than 16384 cells, the most an import accepts"
    );
}

#[test]
fn a_csv_record_of_more_fields_than_columns_is_refused_early() {
    let line = |fields: usize| format!("{}\n", vec!["x"; fields].join(","));
    let sheet = read(FileKind::Csv, line(16_384).as_bytes()).expect("16384 fields");
    assert_eq!(sheet.rows[0].cells.len(), 16_384);
    let message = refused(
        FileKind::Csv,
        line(16_385).as_bytes(),
        &ImportLimits::default(),
    );
    assert!(message.contains("row 1 has 16385 fields"), "{message}");
    // A line of 8 million commas is refused at its 16,385th field, before the csv crate
    // grows a record to hold them.
    let commas = ",".repeat(8_000_000);
    let message = refused(FileKind::Csv, commas.as_bytes(), &ImportLimits::default());
    assert!(message.contains("row 1 has 16385 fields"), "{message}");
}

#[test]
fn two_million_junk_csv_lines_are_refused_before_they_are_read() {
    let mut junk = Vec::with_capacity(4_000_000);
    for _ in 0..2_000_000 {
        junk.extend_from_slice(b"x\n");
    }
    let (error, rows) = refused_rows(FileKind::Csv, &junk, "refused");
    assert!(
        error.message.contains("row 1048577, past the last row"),
        "{}",
        error.message
    );
    assert_eq!(rows, 0);
}
