//! Tests of the readers and writers of quote files ([`super`]).

use super::super::validate::COLUMNS;
use super::super::write::{to_csv, to_xlsx, typed_rows};
use super::xlsx_file::{float_cell, iso_date, UNCALCULATED_FORMULA};
use super::*;
use crate::quotes::recalc::QuoteRow;
use rust_decimal::Decimal;
use rust_xlsxwriter::{ExcelDateTime, Format, Formula, Workbook};
use std::io::Cursor;
use std::str::FromStr;

fn text(s: &str) -> Cell {
    Cell::Text(s.to_owned())
}

fn number(s: &str) -> Cell {
    Cell::Number(s.to_owned())
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("test date")
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).expect("test decimal")
}

fn csv(s: &str) -> Sheet {
    read(FileKind::Csv, s.as_bytes()).expect("readable csv")
}

#[test]
fn file_kind_by_extension() {
    assert_eq!(FileKind::of_name("q.CSV"), Some(FileKind::Csv));
    assert_eq!(FileKind::of_name("q.Xlsx"), Some(FileKind::Xlsx));
    assert_eq!(FileKind::of_name("q.xls"), None);
}

#[test]
fn csv_cells_are_exact_text() {
    let sheet = csv("trade_date,specification\n20261120,\" Ä 8x B200, SXM \"\"180GB\"\" \"\n");
    assert_eq!(sheet.rows.len(), 2);
    assert_eq!(sheet.rows[0].number, 1);
    assert_eq!(
        sheet.rows[1],
        SheetRow {
            number: 2,
            cells: vec![text("20261120"), text(" Ä 8x B200, SXM \"180GB\" ")],
        }
    );
}

#[test]
fn csv_strips_the_bom_only() {
    let mut bytes = b"\xEF\xBB\xBFtrade_date, index_code \r\n".to_vec();
    bytes.extend_from_slice(b"a,b\r\n");
    let sheet = read(FileKind::Csv, &bytes).expect("readable");
    assert_eq!(
        sheet.rows[0].cells,
        vec![text("trade_date"), text(" index_code ")]
    );
    assert_eq!(sheet.rows[1].number, 2);
}

#[test]
fn csv_blank_rows_are_skipped_but_counted() {
    let sheet = csv("h1,h2\n\n,\na,b\n\"multi\nline\",x\nc,\n");
    let numbers: Vec<u32> = sheet.rows.iter().map(|r| r.number).collect();
    // Row 2 is an empty line, row 3 only separators, row 5 spans two lines.
    assert_eq!(numbers, vec![1, 4, 5, 6]);
    assert_eq!(sheet.rows[2].cells, vec![text("multi\nline"), text("x")]);
    assert_eq!(sheet.rows[3].cells, vec![text("c"), Cell::Empty]);
}

#[test]
fn csv_row_numbers_follow_line_breaks_outside_quotes() {
    let numbers = |s: &str| -> Vec<u32> { csv(s).rows.iter().map(|r| r.number).collect() };
    assert_eq!(numbers("a\r\n\r\nb\r\n"), vec![1, 3]);
    assert_eq!(numbers("a\r\rb\rc"), vec![1, 3, 4]);
    // A quote inside an unquoted field is literal and opens nothing.
    assert_eq!(numbers("x\"y,z\nq\n"), vec![1, 2]);
    // Escaped quotes and a line break inside quotes.
    assert_eq!(numbers("\"a\"\"\n\n\"\"b\",c\n\nd"), vec![1, 3]);
    assert_eq!(csv("x\"y,z\n").rows[0].cells[0], text("x\"y"));
}

#[test]
fn csv_leading_blank_lines_keep_real_numbers() {
    let sheet = csv("\n\nh\nv\n");
    let numbers: Vec<u32> = sheet.rows.iter().map(|r| r.number).collect();
    assert_eq!(numbers, vec![3, 4]);
}

#[test]
fn csv_ragged_rows_are_fine() {
    let sheet = csv("a,b,c\n1\n1,2,3,4\n");
    assert_eq!(sheet.rows[1].cells, vec![text("1")]);
    assert_eq!(sheet.rows[2].cells.len(), 4);
}

#[test]
fn csv_empty_file_is_an_empty_sheet() {
    assert_eq!(csv(""), Sheet::default());
    assert_eq!(csv("\u{FEFF}"), Sheet::default());
    assert_eq!(csv("\n\n,,\n"), Sheet::default());
}

#[test]
fn csv_not_utf8_names_the_row() {
    let err = read(FileKind::Csv, b"a,b\nok,\xE4rger\n").expect_err("latin-1");
    assert_eq!(err.code, crate::ErrorCode::InvalidRequest);
    assert!(err.message.contains("not UTF-8"), "{}", err.message);
    assert!(err.message.contains("row 2"), "{}", err.message);
    assert!(err.message.contains("field 2"), "{}", err.message);
}

#[test]
fn csv_that_is_a_workbook_is_refused_clearly() {
    let bytes = to_xlsx(&[]).expect("xlsx");
    let err = read(FileKind::Csv, &bytes).expect_err("zip");
    assert_eq!(err.code, crate::ErrorCode::InvalidRequest);
    assert!(err.message.contains(".xlsx"), "{}", err.message);
}

#[test]
fn garbage_is_not_a_workbook() {
    for bytes in [&b"not a zip at all"[..], b"PK\x03\x04garbage"] {
        let err = read(FileKind::Xlsx, bytes).expect_err("garbage");
        assert_eq!(err.code, crate::ErrorCode::InvalidRequest);
        assert_eq!(
            err.message,
            "the file is not an .xlsx workbook, or it is damaged: save it again as an \
                 Excel workbook (.xlsx)"
        );
    }
    let mut xls = OLE_MAGIC.to_vec();
    xls.extend_from_slice(&[0; 512]);
    let err = read(FileKind::Xlsx, &xls).expect_err("xls");
    assert_eq!(err.code.as_u32(), 40001);
    assert!(err.message.contains("old-style .xls"), "{}", err.message);
}

#[test]
fn a_zip_that_is_not_a_workbook_is_refused() {
    // A valid xlsx truncated in the middle is a corrupt zip.
    let bytes = to_xlsx(&[]).expect("xlsx");
    let err = read(FileKind::Xlsx, &bytes[..bytes.len() / 2]).expect_err("corrupt");
    assert_eq!(err.code.as_u32(), 40001);
}

/// `bytes` with the first sheet's XML passed through `edit`.
pub(crate) fn with_sheet_xml(bytes: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    with_part(bytes, "xl/worksheets/sheet1.xml", edit)
}

/// `bytes` with the archive part `part` passed through `edit`.
pub(crate) fn with_part(bytes: &[u8], part: &str, edit: impl Fn(&str) -> String) -> Vec<u8> {
    rewrite_parts(bytes, zip::CompressionMethod::Deflated, |name, content| {
        if name == part {
            edit(std::str::from_utf8(&content).expect("utf-8")).into_bytes()
        } else {
            content
        }
    })
}

/// `bytes` written again as an archive of parts compressed by `method`, each part's
/// content passed through `edit` with its name.
pub(crate) fn rewrite_parts(
    bytes: &[u8],
    method: zip::CompressionMethod,
    edit: impl Fn(&str, Vec<u8>) -> Vec<u8>,
) -> Vec<u8> {
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    copy_parts(bytes, options, edit)
        .finish()
        .expect("finish")
        .into_inner()
}

/// An archive being written with the parts of `bytes`, each written with `options`
/// and its content passed through `edit` with its name; more parts may follow.
pub(crate) fn copy_parts(
    bytes: &[u8],
    options: zip::write::SimpleFileOptions,
    edit: impl Fn(&str, Vec<u8>) -> Vec<u8>,
) -> zip::ZipWriter<Cursor<Vec<u8>>> {
    use std::io::{Read, Write};
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).expect("entry");
        let name = file.name().expect("entry name").to_string();
        let mut content = Vec::new();
        file.read_to_end(&mut content).expect("read entry");
        let content = edit(&name, content);
        out.start_file(name, options).expect("start entry");
        out.write_all(&content).expect("write entry");
    }
    out
}

#[test]
fn xlsx_rows_out_of_order_are_refused_not_misnumbered() {
    let bytes = to_xlsx(&sample_rows()).expect("workbook");
    // Swap rows 2 and 3, as no spreadsheet application writes them.
    let swapped = with_sheet_xml(&bytes, |xml| {
        let row = |n: u32| {
            let start = xml.find(&format!("<row r=\"{n}\"")).expect("row");
            let end = start + xml[start..].find("</row>").expect("row end") + 6;
            (start, end)
        };
        let ((s2, e2), (s3, e3)) = (row(2), row(3));
        format!(
            "{}{}{}{}",
            &xml[..s2],
            &xml[s3..e3],
            &xml[e2..s3],
            &xml[s2..e2]
        ) + &xml[e3..]
    });
    // Unchanged, the edit round-trips: the check is about the order alone.
    let same = with_sheet_xml(&bytes, str::to_owned);
    assert_eq!(read(FileKind::Xlsx, &same).expect("readable").rows.len(), 3);

    let error = read(FileKind::Xlsx, &swapped).expect_err("refused");
    assert_eq!(error.code.as_u32(), 40001);
    assert!(
        error.message.contains("lists row 2 after row 3"),
        "{}",
        error.message
    );
}

#[test]
fn reading_stops_when_told() {
    let bytes = to_xlsx(&sample_rows()).expect("workbook");
    for kind_bytes in [
        (FileKind::Xlsx, bytes),
        (FileKind::Csv, to_csv(&sample_rows())),
    ] {
        let (kind, bytes) = kind_bytes;
        let mut seen = Vec::new();
        read_rows(kind, &bytes, &ImportLimits::default(), &mut |row| {
            seen.push(row.number);
            seen.len() < 2
        })
        .expect("readable");
        assert_eq!(seen, vec![1, 2], "{kind:?}");
    }
}

pub(crate) fn sample_rows() -> Vec<QuoteRow> {
    vec![
        QuoteRow {
            trade_date: date(2026, 11, 20),
            index_code: "GPU_Index".to_owned(),
            specification: " Ä 8x B200 SXM 180GB ".to_owned(),
            weight: dec("0.33333333"),
            price: dec("250000.123456"),
        },
        QuoteRow {
            trade_date: date(2026, 11, 20),
            index_code: "GPU_Index".to_owned(),
            specification: "H100, \"PCIe\" 80GB".to_owned(),
            weight: dec("0.66666667"),
            price: dec("0.000001"),
        },
    ]
}

#[test]
fn to_xlsx_writes_text_cells_that_read_back_exactly() {
    let bytes = to_xlsx(&sample_rows()).expect("xlsx");
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(sheet.rows.len(), 3);
    assert_eq!(
        sheet.rows[0].cells,
        COLUMNS.iter().map(|h| text(h)).collect::<Vec<_>>()
    );
    assert_eq!(
        sheet.rows[1],
        SheetRow {
            number: 2,
            cells: vec![
                text("20261120"),
                text("GPU_Index"),
                text(" Ä 8x B200 SXM 180GB "),
                text("0.33333333"),
                text("250000.123456"),
            ],
        }
    );
    assert_eq!(sheet.rows[2].cells[2], text("H100, \"PCIe\" 80GB"));
}

#[test]
fn to_csv_reads_back_exactly() {
    let bytes = to_csv(&sample_rows());
    assert!(bytes.starts_with(b"trade_date,index_code,specification,weight,price\n"));
    let sheet = read(FileKind::Csv, &bytes).expect("readable");
    assert_eq!(sheet.rows.len(), 3);
    assert_eq!(sheet.rows[1].cells[2], text(" Ä 8x B200 SXM 180GB "));
    assert_eq!(sheet.rows[2].cells[2], text("H100, \"PCIe\" 80GB"));
    assert_eq!(sheet.rows[2].cells[4], text("0.000001"));
}

#[test]
fn floats_are_shortest_plain_text() {
    assert_eq!(float_cell(0.1), number("0.1"));
    assert_eq!(float_cell(250000.1), number("250000.1"));
    assert_eq!(float_cell(1e-7), number("0.0000001"));
    assert_eq!(float_cell(1e21), number("1000000000000000000000"));
    assert_eq!(float_cell(0.1 + 0.2), number("0.30000000000000004"));
    assert!(matches!(float_cell(f64::NAN), Cell::Invalid(_)));
    assert!(matches!(float_cell(f64::INFINITY), Cell::Invalid(_)));
}

#[test]
fn iso_dates() {
    assert_eq!(iso_date("2026-11-20"), Cell::Date(date(2026, 11, 20)));
    assert_eq!(
        iso_date("2026-11-20T00:00:00"),
        Cell::Date(date(2026, 11, 20))
    );
    assert_eq!(
        iso_date("2026-11-20T10:30:00"),
        Cell::Invalid("a date with a time of day".to_owned())
    );
    assert!(matches!(iso_date("20.11.2026"), Cell::Invalid(_)));
}

/// A workbook as a spreadsheet user makes it: number, date, formula, error cells.
fn typed_workbook() -> Vec<u8> {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    sheet.set_formula_result_default("");
    let datetime_format = Format::new().set_num_format("yyyy-mm-dd hh:mm");
    typed_rows(sheet, &[(0.1, 250000.1), (0.2, 250000.1), (0.7, 250000.1)]);
    // Row 5: a formula with a cached result, a formula without one, an error value,
    // a boolean and a date-time with a time of day.
    let noon = ExcelDateTime::from_ymd(2026, 11, 20)
        .expect("date")
        .and_hms(12, 0, 0)
        .expect("time");
    sheet
        .write_datetime_with_format(4, 0, &noon, &datetime_format)
        .expect("datetime");
    sheet.write_boolean(4, 1, true).expect("bool");
    sheet
        .write_formula(4, 2, Formula::new("=NA()").set_result("#N/A"))
        .expect("error");
    sheet
        .write_formula(4, 3, Formula::new("=0.5").set_result("0.5"))
        .expect("formula");
    sheet.write_formula(4, 4, "=1+1").expect("uncalculated");
    workbook.save_to_buffer().expect("save")
}

#[test]
fn typed_xlsx_cells() {
    let sheet = read(FileKind::Xlsx, &typed_workbook()).expect("readable");
    assert_eq!(sheet.rows.len(), 5);
    assert_eq!(
        sheet.rows[1].cells,
        vec![
            Cell::Date(date(2026, 11, 20)),
            text("GPU_Index"),
            text("spec 1"),
            number("0.1"),
            number("250000.1"),
        ]
    );
    assert_eq!(sheet.rows[2].cells[3], number("0.2"));
    assert_eq!(sheet.rows[3].cells[3], number("0.7"));
    assert_eq!(
        sheet.rows[4],
        SheetRow {
            number: 5,
            cells: vec![
                Cell::Invalid("a date with a time of day".to_owned()),
                Cell::Invalid("a TRUE/FALSE value".to_owned()),
                Cell::Invalid("the error value #N/A".to_owned()),
                number("0.5"),
                Cell::Invalid(UNCALCULATED_FORMULA.to_owned()),
            ],
        }
    );
}

#[test]
fn xlsx_row_and_column_numbers_are_the_sheets() {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    // The table starts at C3; row 4 is blank; row 6 holds only empty strings.
    sheet.write_string(2, 2, "h").expect("w");
    sheet.write_number(4, 3, 7).expect("w");
    sheet.write_string(5, 2, "").expect("w");
    sheet.write_string(6, 2, "x").expect("w");
    let bytes = workbook.save_to_buffer().expect("save");
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(
        sheet.rows,
        vec![
            SheetRow {
                number: 3,
                cells: vec![Cell::Empty, Cell::Empty, text("h")],
            },
            SheetRow {
                number: 5,
                cells: vec![Cell::Empty, Cell::Empty, Cell::Empty, number("7")],
            },
            SheetRow {
                number: 7,
                cells: vec![Cell::Empty, Cell::Empty, text("x")],
            },
        ]
    );
}

#[test]
fn an_uncalculated_formula_alone_on_its_row_is_still_seen() {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    sheet.set_formula_result_default("");
    sheet.write_string(0, 0, "h").expect("w");
    sheet.write_formula(3, 1, "=A1").expect("w");
    let bytes = workbook.save_to_buffer().expect("save");
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(sheet.rows.len(), 2);
    assert_eq!(sheet.rows[1].number, 4);
    assert_eq!(
        sheet.rows[1].cells,
        vec![Cell::Empty, Cell::Invalid(UNCALCULATED_FORMULA.to_owned())]
    );
}

#[test]
fn an_empty_workbook_is_an_empty_sheet() {
    assert_eq!(
        read(FileKind::Xlsx, b"").expect("0 bytes"),
        Sheet::default()
    );
    let mut workbook = Workbook::new();
    workbook.add_worksheet();
    let bytes = workbook.save_to_buffer().expect("save");
    assert_eq!(
        read(FileKind::Xlsx, &bytes).expect("readable"),
        Sheet::default()
    );
}

#[test]
fn only_the_first_sheet_is_read() {
    let mut workbook = Workbook::new();
    workbook
        .add_worksheet()
        .write_string(0, 0, "first")
        .expect("w");
    workbook
        .add_worksheet()
        .write_string(0, 0, "second")
        .expect("w");
    let bytes = workbook.save_to_buffer().expect("save");
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(sheet.rows.len(), 1);
    assert_eq!(sheet.rows[0].cells, vec![text("first")]);
}
