//! The D8 bounds, each on the file that broke it before: a cell reference far past the
//! last column or row, a declared range past the sheet, an archive part past its cap or
//! lying about its size, a shared-string count or styles part that calamine would
//! multiply into gigabytes, millions of junk CSV lines, long cells, NUL, long echoes.

use std::io::{Cursor, Read, Write};

use chrono::NaiveDate;

use super::bounds::{
    echo, ErrorList, ImportLimits, ECHO_CHARS, MAX_CELL_CHARS, MAX_COLUMNS, MAX_LISTED_ERRORS,
    MAX_ROWS,
};
use super::validate::{Reference, RowError, Validator};
use super::workbook::tests::{sample_rows, with_part, with_sheet_xml};
use super::workbook::{read, read_rows, read_with, Cell, FileKind};
use super::write::{to_csv, to_xlsx};
use crate::{ApiError, ErrorCode};

fn sample_xlsx() -> Vec<u8> {
    to_xlsx(&sample_rows()).expect("workbook")
}

/// The refusal of `bytes`, which must be 400 / 40001.
fn refused(kind: FileKind, bytes: &[u8], limits: &ImportLimits) -> String {
    let error = read_with(kind, bytes, limits).expect_err("refused");
    assert_eq!(error.code, ErrorCode::InvalidRequest, "{}", error.message);
    error.message
}

fn refused_xlsx(bytes: &[u8]) -> String {
    refused(FileKind::Xlsx, bytes, &ImportLimits::default())
}

/// The first sheet with `cell` appended to its row 1.
fn with_cell_in_row_1(cell: &str) -> Vec<u8> {
    with_sheet_xml(&sample_xlsx(), |xml| {
        xml.replacen("</row>", &format!("{cell}</row>"), 1)
    })
}

fn inline(reference: &str) -> String {
    format!("<c r=\"{reference}\" t=\"inlineStr\"><is><t>x</t></is></c>")
}

#[test]
fn a_cell_in_column_lxqeasv_is_refused_before_anything_is_allocated() {
    // Before the bound, `put` resized row 1 to four billion cells: an abort.
    let bytes = with_cell_in_row_1(&inline("LXQEASV1"));
    let mut rows = 0;
    let error = read_rows(
        FileKind::Xlsx,
        &bytes,
        &ImportLimits::default(),
        &mut |_| {
            rows += 1;
            true
        },
    )
    .expect_err("refused");
    assert_eq!(error.code.as_u32(), 40001);
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
        let mut rows = 0;
        let error = read_rows(
            FileKind::Xlsx,
            &bytes,
            &ImportLimits::default(),
            &mut |_| {
                rows += 1;
                true
            },
        )
        .expect_err(range);
        assert_eq!(error.code.as_u32(), 40001);
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
fn an_archive_part_past_the_cap_is_refused_by_name() {
    let limits = ImportLimits {
        max_entry_bytes: 4096,
        ..ImportLimits::default()
    };
    // theme1.xml inflates to about 7 KB: never read for the quotes, refused all the same.
    let message = refused(FileKind::Xlsx, &sample_xlsx(), &limits);
    assert!(
        message.contains("'xl/theme/theme1.xml' inflates to"),
        "{message}"
    );
    assert!(
        message.contains("more than the 4096 bytes an import accepts"),
        "{message}"
    );
    let message = refused(
        FileKind::Xlsx,
        &sample_xlsx(),
        &ImportLimits {
            max_entry_bytes: 1024,
            ..limits
        },
    );
    assert!(message.contains("1024 bytes"), "{message}");
    // In MiB when it is a whole number of them.
    let mib = ImportLimits {
        max_entry_bytes: 1024 * 1024,
        ..limits
    };
    let big = with_sheet_xml(&sample_xlsx(), |xml| {
        xml.replace(
            "</worksheet>",
            &format!("<!--{}--></worksheet>", " ".repeat(1 << 21)),
        )
    });
    let message = refused(FileKind::Xlsx, &big, &mib);
    assert!(message.contains("'xl/worksheets/sheet1.xml'"), "{message}");
    assert!(
        message.contains("more than the 1 MiB an import accepts"),
        "{message}"
    );
}

#[test]
fn many_parts_to_scan_are_refused_before_they_are_scanned() {
    // Each copy is within the cap, but calamine reads one: scanning them all is bounded.
    let strings = "<si><t>x</t></si>".repeat(100);
    let copy = format!("<sst uniqueCount=\"100\">{strings}</sst>");
    let mut archive = zip::ZipArchive::new(Cursor::new(sample_xlsx())).expect("a zip");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).expect("entry");
        let name = file.name().expect("name").to_string();
        let mut content = Vec::new();
        file.read_to_end(&mut content).expect("read");
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .expect("start");
        out.write_all(&content).expect("write");
    }
    for i in 0..20 {
        out.start_file(
            format!("copy{i}/SharedStrings.xml"),
            zip::write::SimpleFileOptions::default(),
        )
        .expect("start");
        out.write_all(copy.as_bytes()).expect("write");
    }
    let bytes = out.finish().expect("finish").into_inner();
    let limits = ImportLimits {
        max_entry_bytes: 8 * 1024,
        ..ImportLimits::default()
    };
    let message = refused(FileKind::Xlsx, &bytes, &limits);
    assert!(
        message.contains("more shared-string and style parts"),
        "{message}"
    );
    read_with(FileKind::Xlsx, &bytes, &ImportLimits::default()).expect("within twice the cap");
}

/// `bytes` with the sizes of `part` in its local header and the central directory
/// replaced by `declared`: a part that lies about what it inflates to.
fn declaring(bytes: &[u8], part: &str, declared: u32) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let le16 = |b: &[u8], at: usize| usize::from(u16::from_le_bytes([b[at], b[at + 1]]));
    let mut patched = 0;
    let mut i = 0;
    while i + 46 <= out.len() {
        // (signature, offset of the uncompressed size, of the name length, of the name)
        let layout = match &out[i..i + 4] {
            b"PK\x03\x04" => Some((22, 26, 30)),
            b"PK\x01\x02" => Some((24, 28, 46)),
            _ => None,
        };
        if let Some((size_at, name_len_at, name_at)) = layout {
            let name_len = le16(&out, i + name_len_at);
            if out.get(i + name_at..i + name_at + name_len) == Some(part.as_bytes()) {
                out[i + size_at..i + size_at + 4].copy_from_slice(&declared.to_le_bytes());
                patched += 1;
            }
        }
        i += 1;
    }
    assert_eq!(patched, 2, "local header and central directory of {part}");
    out
}

#[test]
fn the_zip_crate_stops_a_part_at_its_declared_size() {
    // What the import relies on: a part that inflates past its declaration fails as
    // soon as it does, so the declared size, which the cap judges, bounds the output.
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    writer
        .start_file("bomb.xml", zip::write::SimpleFileOptions::default())
        .expect("start");
    let block = vec![b'a'; 1 << 20];
    for _ in 0..16 {
        writer.write_all(&block).expect("write");
    }
    let bomb = writer.finish().expect("finish").into_inner();
    assert!(
        bomb.len() < 100_000,
        "16 MiB of one letter deflates to little"
    );
    let lying = declaring(&bomb, "bomb.xml", 1000);
    let mut archive = zip::ZipArchive::new(Cursor::new(&lying[..])).expect("a zip");
    {
        let mut entry = archive.by_name("bomb.xml").expect("entry");
        assert_eq!(entry.size(), 1000);
        let mut out = Vec::new();
        let error = entry
            .read_to_end(&mut out)
            .expect_err("past its declared size");
        assert!(out.len() <= 1001, "read {} bytes", out.len());
        assert!(
            error
                .to_string()
                .contains("larger than its declared uncompressed size"),
            "{error}"
        );
    }
    // Read in pieces, as calamine's XML reader does, the same.
    let mut entry = archive.by_name("bomb.xml").expect("entry");
    let mut total = 0usize;
    let mut buffer = vec![0u8; 8192];
    let failed = loop {
        match entry.read(&mut buffer) {
            Ok(0) => break false,
            Ok(n) => total += n,
            Err(_) => break true,
        }
    };
    assert!(failed && total <= 1000 + buffer.len(), "read {total} bytes");
}

#[test]
fn a_part_that_lies_about_its_size_is_a_damaged_workbook() {
    let bytes = sample_xlsx();
    // The sheet declares 200 bytes and inflates to about 1,200.
    let message = refused_xlsx(&declaring(&bytes, "xl/worksheets/sheet1.xml", 200));
    assert!(message.contains("declared uncompressed size"), "{message}");
    // The shared strings, which the pre-scan reads first.
    let message = refused_xlsx(&declaring(&bytes, "xl/sharedStrings.xml", 100));
    assert!(message.contains("part 'xl/sharedStrings.xml'"), "{message}");
    assert!(message.contains("declared uncompressed size"), "{message}");
}

#[test]
fn a_shared_string_count_calamine_would_reserve_terabytes_for_is_refused() {
    // calamine reserves `uniqueCount` strings (24 bytes each) before reading one: this
    // 2 KB file asked for 2.4 TB, and the failed allocation aborted the process.
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        xml.replace("uniqueCount=\"13\"", "uniqueCount=\"99999999999\"")
    });
    let message = refused_xlsx(&bytes);
    assert!(message.contains("holds 99999999999 texts"), "{message}");
    assert!(
        message.contains("more than the 10000000 cells"),
        "{message}"
    );
    // The strings themselves are counted too, whatever the count says.
    let limits = ImportLimits {
        max_cells: 12,
        ..ImportLimits::default()
    };
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        xml.replace("uniqueCount=\"13\"", "uniqueCount=\"1\"")
    });
    let message = refused(FileKind::Xlsx, &bytes, &limits);
    assert!(message.contains("holds 13 texts"), "{message}");
}

#[test]
fn styles_calamine_would_multiply_are_refused() {
    // calamine copies a font's name into every cell format that uses it: a 10 KB name
    // and 10,000 formats would be 100 MB, and it grows with the square of the part.
    let name = "F".repeat(10_000);
    let formats = "<xf fontId=\"0\"/>".repeat(10_000);
    let bytes = with_part(&sample_xlsx(), "xl/styles.xml", |xml| {
        xml.replace(
            "<name val=\"Calibri\"/>",
            &format!("<name val=\"{name}\"/>"),
        )
        .replace(
            "<cellXfs count=\"1\">",
            &format!("<cellXfs count=\"1\">{formats}"),
        )
    });
    let message = refused_xlsx(&bytes);
    assert!(
        message.contains("styles (part 'xl/styles.xml')"),
        "{message}"
    );
    // The long name alone, or many formats alone, are fine.
    for (name, formats) in [(name.as_str(), ""), ("Calibri", formats.as_str())] {
        let bytes = with_part(&sample_xlsx(), "xl/styles.xml", |xml| {
            xml.replace(
                "<name val=\"Calibri\"/>",
                &format!("<name val=\"{name}\"/>"),
            )
            .replace(
                "<cellXfs count=\"1\">",
                &format!("<cellXfs count=\"1\">{formats}"),
            )
        });
        read(FileKind::Xlsx, &bytes).expect("readable");
    }
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
    let mut rows = 0;
    let error = read_rows(FileKind::Csv, &junk, &ImportLimits::default(), &mut |_| {
        rows += 1;
        true
    })
    .expect_err("refused");
    assert_eq!(error.code.as_u32(), 40001);
    assert!(
        error.message.contains("row 1048577, past the last row"),
        "{}",
        error.message
    );
    assert_eq!(rows, 0);
}

fn reference() -> Reference {
    Reference {
        quote_indexes: ["GPU_Index".to_owned(), "Server_Index".to_owned()]
            .into_iter()
            .collect(),
        open_days: [NaiveDate::from_ymd_opt(2026, 11, 20).expect("date")]
            .into_iter()
            .collect(),
        calculated_indexes: ["Hardware_Index".to_owned()].into_iter().collect(),
    }
}

/// `csv` read and validated: the quotes' count, or the rejection as the client sees it.
fn import(csv: &str) -> Result<usize, ApiError> {
    let reference = reference();
    let mut validator = Validator::new(&reference);
    read_rows(
        FileKind::Csv,
        csv.as_bytes(),
        &ImportLimits::default(),
        &mut |row| {
            validator.row(&row);
            true
        },
    )?;
    validator
        .finish()
        .map_err(|r| ApiError::rejected(r.errors, r.total))
}

const HEAD: &str = "trade_date,index_code,specification,weight,price\n";

#[test]
fn two_million_problems_list_the_first_thousand_and_count_all() {
    // 400,000 junk lines, five problems each (a date that is not one, four cells
    // missing): before the bound every problem was listed, a 642 MB answer for the
    // 2,000,000 junk lines that are now refused as more rows than a sheet has.
    let mut csv = String::with_capacity(HEAD.len() + 400_000 * 2);
    csv.push_str(HEAD);
    for _ in 0..400_000 {
        csv.push_str("x\n");
    }
    let error = import(&csv).expect_err("rejected");
    assert_eq!(error.code.as_u32(), 40002);
    assert_eq!(error.errors_total, 2_000_000);
    assert_eq!(error.errors.len(), MAX_LISTED_ERRORS);
    assert_eq!(
        error.message,
        "the file was rejected: 2000000 problems; the first 1000 are listed in errors"
    );
    // Rows 2 to 201, each cell in the D8 column order.
    let first: Vec<(u32, &str)> = error.errors[..6]
        .iter()
        .map(|e| (e.row, e.column.as_str()))
        .collect();
    assert_eq!(
        first,
        [
            (2, "trade_date"),
            (2, "index_code"),
            (2, "specification"),
            (2, "weight"),
            (2, "price"),
            (3, "trade_date")
        ]
    );
    assert_eq!(error.errors.last().map(|e| e.row), Some(201));
}

#[test]
fn weight_sums_found_last_are_listed_in_row_order() {
    // Rows 2-3: a weight sum of 0.2, judged after the last row; rows 4-1503: a bad
    // price each (in a group of their own, whose sum is left alone). The first 1,000
    // in row order start with the sum's two rows.
    let mut csv = HEAD.to_owned();
    csv.push_str("20261120,GPU_Index,a,0.1,1\n20261120,GPU_Index,b,0.1,1\n");
    for i in 0..1_500 {
        csv.push_str(&format!("20261120,Server_Index,s{i},0.1,x\n"));
    }
    let error = import(&csv).expect_err("rejected");
    assert_eq!(error.errors_total, 1_502);
    assert_eq!(error.errors.len(), MAX_LISTED_ERRORS);
    let places: Vec<(u32, &str)> = error.errors[..3]
        .iter()
        .map(|e| (e.row, e.column.as_str()))
        .collect();
    assert_eq!(places, [(2, "weight"), (3, "weight"), (4, "price")]);
    assert_eq!(error.errors.last().map(|e| e.row), Some(1001));
    assert!(error.errors.windows(2).all(|w| w[0].row <= w[1].row));
}

#[test]
fn the_error_list_keeps_the_smallest_and_counts_all() {
    let error = |row: u32| RowError {
        row,
        column: String::new(),
        reason: String::new(),
    };
    let mut list = ErrorList::default();
    for row in (0..3_000).rev() {
        list.add(0, error(row));
    }
    assert!(!list.would_list(1_000, 0));
    assert!(list.would_list(998, 0));
    let (listed, total) = list.into_sorted();
    assert_eq!(total, 3_000);
    let rows: Vec<u32> = listed.iter().map(|e| e.row).collect();
    assert_eq!(rows, (0..1_000).collect::<Vec<_>>());
}

#[test]
fn one_problem_and_a_few_keep_their_messages() {
    let problem = RowError {
        row: 2,
        column: "price".to_owned(),
        reason: "missing".to_owned(),
    };
    let one = ApiError::rejected(vec![problem.clone()], 1);
    assert_eq!(
        one.message,
        "the file was rejected: 1 problem, listed in errors"
    );
    assert_eq!(one.errors_total, 1);
    let two = ApiError::rejected(vec![problem; 2], 2);
    assert_eq!(
        two.message,
        "the file was rejected: 2 problems, listed in errors"
    );
    assert_eq!(two.errors_total, 2);
    assert_eq!(ApiError::invalid("x").errors_total, 0);
}

/// A one-quote file with the cell of `column` (0-based, D8 order) replaced.
fn one_row(column: usize, value: &str) -> String {
    let mut cells = ["20261120", "GPU_Index", "B200", "1", "250000"].map(str::to_owned);
    cells[column] = format!("\"{}\"", value.replace('"', "\"\""));
    format!("{HEAD}{}\n", cells.join(","))
}

const COLUMNS: [&str; 5] = [
    "trade_date",
    "index_code",
    "specification",
    "weight",
    "price",
];

#[test]
fn a_cell_of_more_than_500_characters_is_an_error_of_its_column() {
    let long = "Ä".repeat(400) + &"7".repeat(200);
    for (k, column) in COLUMNS.iter().enumerate() {
        let error = import(&one_row(k, &long)).expect_err(column);
        assert_eq!(error.errors.len(), 1, "{column}: {:?}", error.errors);
        let problem = &error.errors[0];
        assert_eq!((problem.row, problem.column.as_str()), (2, *column));
        assert_eq!(
            problem.reason,
            format!(
                "the cell holds 600 characters, more than the 500 a cell may hold: '{}…'",
                "Ä".repeat(ECHO_CHARS)
            )
        );
    }
    // 500 characters are within the bound (the specification's own limit is 200).
    import(&one_row(4, &"1".repeat(MAX_CELL_CHARS))).expect_err("too large a price");
    let error = import(&one_row(2, &"s".repeat(MAX_CELL_CHARS))).expect_err("long spec");
    assert_eq!(
        error.errors[0].reason,
        "the specification is 500 characters long; at most 200 are allowed"
    );
}

#[test]
fn a_header_cell_of_more_than_500_characters_is_echoed_short() {
    let long = "h".repeat(8_000_000);
    let csv = format!("trade_date,index_code,specification,weight,price,{long}\n1,2,3,4,5,6\n");
    let error = import(&csv).expect_err("rejected");
    assert_eq!(error.errors.len(), 1);
    let problem = &error.errors[0];
    let cut = format!("{}…", "h".repeat(ECHO_CHARS));
    assert_eq!(problem.column, cut);
    assert_eq!(
        problem.reason,
        format!(
            "the header cell in column F: the cell holds 8000000 characters, more than the \
             500 a cell may hold: '{cut}'"
        )
    );
}

#[test]
fn nul_in_any_column_is_an_error_of_its_row_and_no_quote() {
    for (k, column) in COLUMNS.iter().enumerate() {
        let good = ["20261120", "GPU_Index", "B200", "1", "250000"][k];
        let csv = one_row(k, &format!("{good}\0"));
        let reference = reference();
        let mut validator = Validator::new(&reference);
        let mut quotes = 0;
        read_rows(
            FileKind::Csv,
            csv.as_bytes(),
            &ImportLimits::default(),
            &mut |row| {
                quotes += usize::from(validator.row(&row).is_some());
                true
            },
        )
        .expect("readable");
        assert_eq!(quotes, 0, "no quote with NUL reaches the COPY ({column})");
        let rejection = validator.finish().expect_err(column);
        assert_eq!(rejection.total, 1);
        let problem = &rejection.errors[0];
        assert_eq!((problem.row, problem.column.as_str()), (2, *column));
        assert_eq!(
            problem.reason,
            "the cell holds a NUL character (code 0), which cannot be stored: remove it"
        );
    }
}

#[test]
fn nul_from_a_workbook_is_a_row_error_too() {
    // OOXML writes U+0000 as `_x0000_`, which calamine reads back as NUL.
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        xml.replace("<t>250000.123456</t>", "<t>250000_x0000_</t>")
    });
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(sheet.rows[1].cells[4], Cell::Text("250000\0".into()));
    let reference = reference();
    let mut validator = Validator::new(&reference);
    let quotes: Vec<u32> = sheet
        .rows
        .iter()
        .filter(|row| validator.row(row).is_some())
        .map(|row| row.number)
        .collect();
    assert_eq!(quotes, [3], "row 2 gives no quote");
    let rejection = validator.finish().expect_err("rejected");
    assert_eq!(rejection.total, 1);
    assert_eq!(
        (rejection.errors[0].row, rejection.errors[0].column.as_str()),
        (2, "price")
    );
}

#[test]
fn echoed_values_are_cut_at_fifty_characters() {
    let long = "q".repeat(120);
    let cut = format!("{}…", "q".repeat(ECHO_CHARS));
    assert_eq!(echo(&long), cut);
    assert_eq!(echo("short"), "short");
    assert_eq!(echo(&"é".repeat(ECHO_CHARS)), "é".repeat(ECHO_CHARS));
    assert_eq!(
        echo("a\0b"),
        "a\u{FFFD}b",
        "no NUL reaches a stored message"
    );

    let reason = |k: usize| {
        import(&one_row(k, &long)).expect_err("bad").errors[0]
            .reason
            .clone()
    };
    assert_eq!(reason(1), format!("unknown index code '{cut}'"));
    assert!(
        reason(0).starts_with(&format!("'{cut}' is not a date")),
        "{}",
        reason(0)
    );
    assert!(
        reason(4).starts_with(&format!("'{cut}' is not a number")),
        "{}",
        reason(4)
    );
    let digits = format!("0.{}", "1".repeat(100));
    assert_eq!(
        import(&one_row(3, &digits)).expect_err("places").errors[0].reason,
        format!(
            "the weight {}… has 100 decimal places; at most 8 are allowed",
            &digits[..ECHO_CHARS]
        )
    );

    // An unknown header name, as column and in the reason.
    let csv = format!("trade_date,index_code,specification,weight,price,{long}\n1,2,3,4,5,6\n");
    let error = import(&csv).expect_err("header");
    assert_eq!(error.errors[0].column, cut);
    assert!(error.errors[0]
        .reason
        .starts_with(&format!("unknown column '{cut}' (column F)")));
}

#[test]
fn a_long_date_time_value_of_a_workbook_is_echoed_short() {
    let value = format!("2026-11-20{}", "x".repeat(200));
    let bytes = with_cell_in_row_1(&format!("<c r=\"F1\" t=\"d\"><v>{value}</v></c>"));
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    let Cell::Invalid(what) = &sheet.rows[0].cells[5] else {
        panic!("{:?}", sheet.rows[0].cells[5]);
    };
    assert_eq!(what, &format!("the date-time value '{}'", echo(&value)));
    assert!(what.chars().count() < 100);
}
