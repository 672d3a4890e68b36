//! `GET /indexes/{code}/download?what=daily|quotes&range=1M|3M|1Y|all&format=csv|xlsx`:
//! an index's daily values (or, for an `aggregate` index, its specification quotes)
//! over a range, as a file named for the index, the range and the day.
//!
//! Read exactly as the index page reads: `POST /api/v1/query` under the request's
//! website identity, page after page, so a file never holds a row or a field the API
//! would not answer this visitor or member. CSV is the API's own CSV (D18: the values
//! as the JSON answer holds them); XLSX holds numbers as numbers shown with the
//! decimals they were published with, and dates as dates.
//!
//! Every page is read before the answer starts, so a file is whole or not sent: a page
//! refused on the way (the reader's per-minute limit, a fault) is that refusal's page
//! (429 with `Retry-After`, ...), and a range past [`MAX_PAGES`] pages is a 400 page
//! asking for a shorter one. (Streamed, a refusal after the status had been sent could
//! only end the file early or cut the connection.) The pages are bounded, and so is
//! what one download holds in memory.

use std::str::FromStr;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use chrono::{Months, NaiveDate};
use iq_actors::indexes::MAX_CODE_CHARS;
use iq_actors::ApiError;
use rust_decimal::Decimal;
use rust_xlsxwriter::{Format, Workbook};
use serde::Deserialize;
use serde_json::Value;

use crate::http::csv_answer;
use crate::site::format::{parse_wire, wire};
use crate::site::path_part::PathPart;
use crate::site::reading::{read, read_on, visible_index, Read, Table};
use crate::site::respond::{page_builder, Caching, PageError, PageResult};
use crate::state::AppState;

/// The most reads one file takes: far past a decade of daily values.
const MAX_PAGES: usize = 40;

#[derive(Deserialize)]
pub struct DownloadQuery {
    what: Option<String>,
    range: Option<String>,
    format: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum What {
    Daily,
    Quotes,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FileFormat {
    Csv,
    Xlsx,
}

/// What a download asks for, checked.
struct Ask {
    code: String,
    what: What,
    /// `1M`, `3M`, `1Y` or `all`, and its months (none for `all`).
    range: (&'static str, Option<u32>),
    format: FileFormat,
}

impl Ask {
    fn parse(code: &str, query: &DownloadQuery) -> Result<Ask, PageError> {
        if code.is_empty() || code.len() > MAX_CODE_CHARS {
            return Err(PageError::not_found("There is no such index."));
        }
        let what = match query.what.as_deref().unwrap_or("daily") {
            "daily" => What::Daily,
            "quotes" => What::Quotes,
            _ => return Err(PageError::bad_request("what must be daily or quotes.")),
        };
        let range = match query.range.as_deref().unwrap_or("3M") {
            "1M" => ("1M", Some(1)),
            "3M" => ("3M", Some(3)),
            "1Y" => ("1Y", Some(12)),
            "all" => ("all", None),
            _ => {
                return Err(PageError::bad_request(
                    "The range must be one of 1M, 3M, 1Y or all.",
                ))
            }
        };
        let format = match query.format.as_deref().unwrap_or("csv") {
            "csv" => FileFormat::Csv,
            "xlsx" => FileFormat::Xlsx,
            _ => return Err(PageError::bad_request("The format must be csv or xlsx.")),
        };
        Ok(Ask {
            code: code.to_owned(),
            what,
            range,
            format,
        })
    }

    /// The query of the `offset`th row on, as the API takes it.
    fn query(&self, since: Option<NaiveDate>, offset: usize) -> Read {
        let api_name = match self.what {
            What::Daily => "index_daily",
            What::Quotes => "index_quote",
        };
        Read::of(api_name)
            .param("index_code", self.code.as_str())
            .day("start_date", since)
            .whole()
            .starting_at(offset)
    }

    /// `GPU_Index-daily-3M-20261128.csv`.
    fn file_name(&self, today: NaiveDate) -> String {
        let what = match self.what {
            What::Daily => "daily",
            What::Quotes => "quotes",
        };
        let ext = match self.format {
            FileFormat::Csv => "csv",
            FileFormat::Xlsx => "xlsx",
        };
        format!(
            "{}-{what}-{}-{}.{ext}",
            self.code,
            self.range.0,
            wire(today)
        )
    }
}

/// `GET /indexes/{code}/download`.
pub async fn download(
    req: HttpRequest,
    code: PathPart,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let ask = Ask::parse(&code, &query)?;
    let today = state.site.today();
    let since = ask
        .range
        .1
        .map(|m| today.checked_sub_months(Months::new(m)).unwrap_or(today));
    // The index first, so an index this reader cannot see is the page's 403 or 404.
    let first = read(
        &req,
        &state,
        vec![
            Read::of("index_basic")
                .param("index_code", ask.code.as_str())
                .fields(&["index_code", "visibility"]),
            ask.query(since, 0),
        ],
    )
    .await?;
    if visible_index(first.table(0), &ask.code)?
        .rows()
        .next()
        .is_none()
    {
        return Err(PageError::not_found(format!(
            "No index named {} is visible to you.",
            ask.code
        )));
    }
    let mut table = first.table(1)?;
    read_on(
        &req,
        &state,
        &mut table,
        |offset| ask.query(since, offset),
        MAX_PAGES,
    )
    .await?;
    if table.has_more {
        return Err(PageError::bad_request(format!(
            "More than {} rows: choose a shorter range.",
            table.items.len()
        )));
    }
    let disposition = format!("attachment; filename=\"{}\"", ask.file_name(today));
    match ask.format {
        FileFormat::Csv => Ok(file(CSV_TYPE, &disposition).body(csv(&table))),
        FileFormat::Xlsx => {
            // Tens of thousands of cells: built on the blocking pool, not a worker.
            let bytes = web::block(move || xlsx(&table))
                .await
                .map_err(ApiError::internal)?
                .map_err(ApiError::internal)?;
            Ok(file(XLSX_TYPE, &disposition).body(bytes))
        }
    }
}

const CSV_TYPE: &str = "text/csv; charset=utf-8";
const XLSX_TYPE: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

fn file(content_type: &str, disposition: &str) -> actix_web::HttpResponseBuilder {
    let mut builder = page_builder(StatusCode::OK, Caching::Private);
    builder
        .insert_header(("content-type", content_type))
        .insert_header(("content-disposition", disposition.to_owned()));
    builder
}

/// The rows as the API's CSV: one header line, then every row.
fn csv(table: &Table) -> String {
    let mut text = String::new();
    csv_answer::push_line(&mut text, table.fields.iter().map(|f| f.as_str().into()));
    for item in &table.items {
        csv_answer::push_line(&mut text, item.iter().map(csv_answer::cell));
    }
    text
}

/// The rows as one worksheet: a header row, then the rows, each value typed.
fn xlsx(table: &Table) -> Result<Vec<u8>, rust_xlsxwriter::XlsxError> {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    let bold = Format::new().set_bold();
    let date = Format::new().set_num_format("yyyy-mm-dd");
    for (col, field) in table.fields.iter().enumerate() {
        let col = u16::try_from(col).unwrap_or(u16::MAX);
        sheet.write_string_with_format(0, col, field, &bold)?;
        sheet.set_column_width(col, 14)?;
    }
    sheet.set_freeze_panes(1, 0)?;
    let mut row: u32 = 1;
    {
        for item in &table.items {
            for (col, (field, value)) in table.fields.iter().zip(item).enumerate() {
                let col = u16::try_from(col).unwrap_or(u16::MAX);
                match typed(field, value) {
                    Cell::Empty => {}
                    Cell::Date(day) => {
                        sheet.write_datetime_with_format(row, col, day, &date)?;
                    }
                    Cell::Number(number, decimals) => {
                        let format = Format::new().set_num_format(number_format(decimals));
                        sheet.write_with_format(row, col, number, &format)?;
                    }
                    Cell::Boolean(b) => {
                        sheet.write_boolean(row, col, b)?;
                    }
                    Cell::Text(text) => {
                        sheet.write_string(row, col, text)?;
                    }
                }
            }
            row += 1;
        }
    }
    workbook.save_to_buffer()
}

/// A value as a spreadsheet cell.
#[derive(Debug, PartialEq)]
enum Cell<'a> {
    Empty,
    Date(NaiveDate),
    /// The number and the decimals it was published with.
    Number(Decimal, u32),
    Boolean(bool),
    Text(&'a str),
}

/// What `value` of `field` is: dates (`YYYYMMDD` in a `*_date` field) as dates, decimal
/// strings and integers as numbers, the rest as text.
fn typed<'a>(field: &str, value: &'a Value) -> Cell<'a> {
    match value {
        Value::Null => Cell::Empty,
        Value::Bool(b) => Cell::Boolean(*b),
        Value::Number(n) => match Decimal::from_str(&n.to_string()) {
            Ok(d) => Cell::Number(d, d.scale()),
            Err(_) => Cell::Empty,
        },
        Value::String(s) => {
            if field.ends_with("_date") {
                if let Some(day) = parse_wire(s) {
                    return Cell::Date(day);
                }
            }
            let numeric = !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
                && field != "index_code";
            match Decimal::from_str(s) {
                Ok(d) if numeric => Cell::Number(d, d.scale()),
                _ => Cell::Text(s),
            }
        }
        // No dataset answers a list or an object in a cell.
        Value::Array(_) | Value::Object(_) => Cell::Empty,
    }
}

/// `0`, `0.0`, `0.000000`: the decimals a number was published with.
fn number_format(decimals: u32) -> String {
    if decimals == 0 {
        "0".to_owned()
    } else {
        format!("0.{}", "0".repeat(decimals as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_become_dates_numbers_and_text_as_the_api_writes_them() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        assert_eq!(typed("trade_date", &json!("20261120")), Cell::Date(day));
        assert_eq!(
            typed("value", &json!("1032.893456")),
            Cell::Number(Decimal::from_str("1032.893456").unwrap(), 6)
        );
        assert_eq!(
            typed("change", &json!("-1.500000")),
            Cell::Number(Decimal::from_str("-1.5").unwrap(), 6)
        );
        assert_eq!(
            typed("index_code", &json!("GPU_Index")),
            Cell::Text("GPU_Index")
        );
        assert_eq!(
            typed("specification", &json!("8x H100")),
            Cell::Text("8x H100")
        );
        assert_eq!(
            typed("vintage", &json!(7)),
            Cell::Number(Decimal::from(7), 0)
        );
        assert_eq!(typed("pct_change", &Value::Null), Cell::Empty);
        assert_eq!(number_format(6), "0.000000");
        assert_eq!(number_format(0), "0");
    }
}
