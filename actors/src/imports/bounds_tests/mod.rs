//! The D8 bounds, each on the file that broke it before: a cell reference far past the
//! last column or row, a declared range past the sheet, an archive part past its cap or
//! lying about its size, a shared-string count or styles part that calamine would
//! multiply into gigabytes, millions of junk CSV lines, long cells, NUL, long echoes.
//!
//! One file a topic: [`sheet`] (dimensions), [`archive`] (the `.xlsx` archive's parts),
//! [`errors`] (the problems listed and counted), [`cells`] (long cells, NUL, echoes).
//! This file holds the helpers they share.

mod archive;
mod cells;
mod errors;
mod sheet;

use chrono::NaiveDate;

use crate::imports::bounds::ImportLimits;
use crate::imports::validate::{ImportReference, Validator};
use crate::imports::workbook::tests::{sample_rows, with_sheet_xml};
use crate::imports::workbook::{read_rows, read_with, FileKind};
use crate::imports::write::to_xlsx;
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

fn reference() -> ImportReference {
    ImportReference {
        quote_indexes: ["GPU_Index".to_owned(), "Server_Index".to_owned()]
            .into_iter()
            .collect(),
        open_days: [NaiveDate::from_ymd_opt(2026, 11, 20).expect("date")]
            .into_iter()
            .collect(),
        calculated_indexes: ["Hardware_Index".to_owned()].into_iter().collect(),
        today: NaiveDate::MAX,
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
