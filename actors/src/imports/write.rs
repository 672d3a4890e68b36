//! Quote rows written as a quote file with the D8 header: CSV (the demo data is
//! imported from one, through the same path as an upload) and, for tests and
//! benchmarks only (feature `test-support`), an `.xlsx` workbook; for tests, rows typed
//! into a workbook as a spreadsheet user types them.
//!
//! Nothing here reads a file; it must never write a value that the readers would
//! read back differently (weights and prices go out as their exact decimal text).

use super::validate::COLUMNS;
use crate::quotes::recalc::QuoteRow;
use crate::wire_date::WireDate;
#[cfg(any(test, feature = "test-support"))]
use crate::ApiError;

/// `rows` as a workbook with the D8 header (tests and benchmarks).
///
/// Every cell is a text cell, weight and price included: a text cell carries the exact
/// decimal string, where a number cell would be an IEEE double that may not hold it.
#[cfg(any(test, feature = "test-support"))]
pub fn to_xlsx(rows: &[QuoteRow]) -> Result<Vec<u8>, ApiError> {
    let mut workbook = rust_xlsxwriter::Workbook::new();
    let sheet = workbook.add_worksheet();
    let xlsx_error = |e: rust_xlsxwriter::XlsxError| ApiError::internal(format_args!("xlsx: {e}"));
    for (col, name) in (0u16..).zip(COLUMNS) {
        sheet.write_string(0, col, name).map_err(xlsx_error)?;
    }
    for (row, quote) in (1u32..).zip(rows) {
        for (col, value) in (0u16..).zip(quote_fields(quote)) {
            sheet.write_string(row, col, value).map_err(xlsx_error)?;
        }
    }
    workbook.save_to_buffer().map_err(xlsx_error)
}

/// Writes the D8 header to `sheet`, then one row per `(weight, price)` typed as a
/// spreadsheet user types it (tests only): a date cell of 2026-11-20, `GPU_Index`,
/// `spec {row}` and number cells. Answers the date and its format, for more rows.
#[cfg(test)]
pub(crate) fn typed_rows(
    sheet: &mut rust_xlsxwriter::Worksheet,
    rows: &[(f64, f64)],
) -> (rust_xlsxwriter::ExcelDateTime, rust_xlsxwriter::Format) {
    let date_format = rust_xlsxwriter::Format::new().set_num_format("yyyy-mm-dd");
    for (col, name) in (0u16..).zip(COLUMNS) {
        sheet.write_string(0, col, name).expect("header");
    }
    let date = rust_xlsxwriter::ExcelDateTime::from_ymd(2026, 11, 20).expect("date");
    for (row, (weight, price)) in (1u32..).zip(rows) {
        sheet
            .write_datetime_with_format(row, 0, &date, &date_format)
            .expect("date");
        sheet.write_string(row, 1, "GPU_Index").expect("index");
        sheet
            .write_string(row, 2, format!("spec {row}"))
            .expect("spec");
        sheet.write_number(row, 3, *weight).expect("weight");
        sheet.write_number(row, 4, *price).expect("price");
    }
    (date, date_format)
}

/// `rows` as UTF-8 CSV (no byte order mark) with the D8 header, values as in
/// [`to_xlsx`]. Fields are quoted only where CSV needs it; nothing is trimmed.
pub fn to_csv(rows: &[QuoteRow]) -> Vec<u8> {
    let mut out = String::with_capacity(64 + rows.len() * 64);
    out.push_str(&COLUMNS.join(","));
    out.push('\n');
    for quote in rows {
        let fields = quote_fields(quote);
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_csv_field(&mut out, field);
        }
        out.push('\n');
    }
    out.into_bytes()
}

fn quote_fields(quote: &QuoteRow) -> [String; 5] {
    [
        WireDate(quote.trade_date).to_string(),
        quote.index_code.clone(),
        quote.specification.clone(),
        quote.weight.to_string(),
        quote.price.to_string(),
    ]
}

fn push_csv_field(out: &mut String, field: &str) {
    if field.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}
