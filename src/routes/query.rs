//! `POST /api/v1/query`: reads the JSON body (40001 at once when it is not JSON, D1)
//! and where the key is sent (D12), holds a caller without a key to the per-minute
//! protection (D15), and passes the body, unvalidated, to the FrontActor, which
//! validates it after the key checks; a key-authenticated answer carries the
//! rate-limit headers (D6).

use actix_web::{post, web, HttpRequest, HttpResponse, ResponseError};

use crate::front_actor::Ask;
use crate::http::page_format::{self, PageFormat};
use crate::http::request_context::QueryDataset;
use crate::http::{
    columnar_answer, compress, credentials, csv_answer, envelope, json_body, rate_limit, RequestId,
};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Query a dataset
///
/// One page of one dataset of the catalogue (`api_name`), filtered by `params`, with the
/// columns `fields` in that order, sorted by the dataset's sort key. Callers: an API key
/// (`X-API-Key` or `Authorization: Bearer`), a website session (the cookie) or a visitor
/// (neither); what each may see is in docs/api.md ("Who sees what"). A present key
/// header always means key identity, even with a cookie.
///
/// Decimals are strings with a fixed number of fractional digits, dates `YYYYMMDD`,
/// absent values `null`. `limit` larger than the server's cap (`MAX_LIMIT`, at most
/// 5000) or the tier's `max_rows` is reduced to it, and `data.limit` says the value
/// used. Page with `offset = offset + returned` while `has_more`, keeping `end_date`
/// fixed. A query matching nothing is a success with `items: []`; so is naming a
/// private or unknown index.
///
/// Every answer to a call with a valid key, refusals included, carries the
/// `X-RateLimit-*`, `RateLimit` and `RateLimit-Policy` headers; a 429 also
/// `Retry-After`. Key checks come first (401, 403), then the body (400), then scope and
/// range (403), then the quota (429). Callers without a key are limited per minute
/// (`WEBSITE_PER_MINUTE`), with no quota.
///
/// With `Accept: text/csv` a success is CSV instead (`text/csv; charset=utf-8`): a header
/// row of `data.fields`, then one RFC 4180 line per item (CRLF line ends), each cell
/// exactly the JSON value (`null` an empty cell, never escaped for spreadsheets), and
/// the page in the headers `X-Limit`, `X-Offset`, `X-Returned` and `X-Has-More`.
/// With `Accept: application/vnd.apache.arrow.stream` it is an Arrow IPC stream, with
/// `Accept: application/vnd.apache.parquet` a Parquet file: one column per field of
/// `data.fields`, decimals `decimal128(38, scale)` (exact), dates `date32`, instants
/// UTC timestamps in microseconds, text UTF-8, the same four headers. Errors stay JSON
/// envelopes.
#[utoipa::path(
    tag = "query",
    operation_id = "query",
    request_body(
        content = QueryRequest,
        content_type = "application/json",
        description = "The dataset, its filters, the columns and the page."
    ),
    responses(
        (
            status = 200,
            description = "One page of rows: the envelope, or with `Accept: text/csv` the \
                           page as CSV (a header row of `data.fields`, then one RFC 4180 line \
                           per item), or its columns as an Arrow IPC stream or a Parquet \
                           file; in those three `X-Limit`, `X-Offset`, `X-Returned` and \
                           `X-Has-More` carry the rest of `data`.",
            content(
                (QueryPage = "application/json"),
                (
                    String = "text/csv; charset=utf-8",
                    example = json!("trade_date,index_value\r\n20260105,1003.417711\r\n")
                ),
                (Vec<u8> = "application/vnd.apache.arrow.stream"),
                (Vec<u8> = "application/vnd.apache.parquet"),
            ),
            headers(
                ("X-Limit" = u32, description = "CSV, Arrow and Parquet answers only: `data.limit`, the page size used."),
                ("X-Offset" = u64, description = "CSV, Arrow and Parquet answers only: `data.offset`, the rows skipped."),
                ("X-Returned" = u32, description = "CSV, Arrow and Parquet answers only: `data.returned`, the rows in the body."),
                ("X-Has-More" = bool, description = "CSV, Arrow and Parquet answers only: `data.has_more`, `true` or `false`."),
            ),
        ),
        (status = 400, response = inline(BadRequest)),
        (status = 401, response = inline(Unauthorized)),
        (status = 403, response = inline(Forbidden)),
        (status = 429, response = inline(TooManyRequests)),
        (status = 500, response = inline(InternalError)),
    ),
    security((), ("api_key" = []), ("bearer" = []), ("session" = [])),
)]
#[post("/query")]
pub async fn query(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let body = match json_body::read_value(&req, payload).await {
        Ok(body) => body,
        Err(error) => return envelope::failure(&request_id, &error),
    };
    let credentials = match credentials::presented(&req) {
        Ok(credentials) => credentials,
        Err(error) => return envelope::failure(&request_id, &error),
    };
    let client_ip = state.client_ip(&req);
    // A catalogue name, so the label set stays bounded whatever the body says.
    let dataset = body
        .get("api_name")
        .and_then(|v| v.as_str())
        .and_then(iq_actors::catalogue::dataset)
        .map(|d| d.api_name);
    let format = page_format::asked(&req);
    let columnar = match format {
        PageFormat::Columnar(columnar) => Some(columnar),
        PageFormat::Json | PageFormat::Csv => None,
    };
    let outcome = match state
        .run_query(
            &request_id,
            credentials,
            client_ip,
            Ask::Native(body, columnar),
        )
        .await
    {
        Ok(outcome) => outcome,
        Err(refused) => return refused.error_response(),
    };
    // The page in the form asked for (D18, D29); refusals stay envelopes.
    let mut response = match &outcome.result {
        Ok(page) => match format {
            PageFormat::Json => {
                envelope::success_page(&request_id, page, compress::accepts_gzip(&req))
            }
            PageFormat::Csv => csv_answer::answer(page),
            PageFormat::Columnar(format) => {
                columnar_answer::answer(page, format, compress::accepts_gzip(&req))
            }
        }
        .unwrap_or_else(|error| envelope::failure(&request_id, &error)),
        Err(error) => envelope::failure(&request_id, error),
    };
    if let Some((status, refused)) = &outcome.quota {
        rate_limit::apply(&mut response, status, *refused);
    }
    if let Some(dataset) = dataset {
        response.extensions_mut().insert(QueryDataset(dataset));
    }
    response
}
