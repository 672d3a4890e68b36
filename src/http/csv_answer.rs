//! A query's page as CSV (D18), for callers that send `Accept: text/csv`: a header row
//! of the page's fields, then one line per item, RFC 4180 quoting and CRLF line ends.
//! Cells are exactly the JSON answer's values (decimals and dates as strings, booleans
//! `true`/`false`, integers as digits, null as an empty cell), never altered: this
//! module must not escape spreadsheet formulas (a client asks for that itself). The
//! page's place goes in headers: `X-Limit`, `X-Offset`, `X-Returned`, `X-Has-More`.
//! Refusals stay JSON envelopes.

use std::borrow::Cow;

use actix_web::http::header::ACCEPT;
use actix_web::{HttpRequest, HttpResponse};
use iq_actors::dataset::Page;
use iq_actors::ApiError;
use serde::Deserialize;
use serde_json::Value;

use super::envelope::BusinessCode;

/// Whether the request asks for CSV: a media range `text/csv` in `Accept` that is not
/// refused with `q=0`.
pub fn wanted(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(ACCEPT)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            media.eq_ignore_ascii_case("text/csv") && !refused
        })
}

#[derive(Deserialize)]
struct PageData {
    fields: Vec<String>,
    items: Vec<Vec<Value>>,
    limit: u64,
    offset: u64,
    returned: u64,
    has_more: bool,
}

/// The page as a CSV answer.
pub fn answer(page: &Page) -> Result<HttpResponse, ApiError> {
    let data: PageData = serde_json::from_str(page.data.get())
        .map_err(|e| ApiError::internal(format_args!("a page's data: {e}")))?;
    let mut body = String::with_capacity(page.data.get().len());
    push_line(
        &mut body,
        data.fields.iter().map(|f| Cow::Borrowed(f.as_str())),
    );
    for item in &data.items {
        push_line(&mut body, item.iter().map(cell));
    }
    let mut response = HttpResponse::Ok()
        .insert_header(("content-type", "text/csv; charset=utf-8"))
        .insert_header(("x-limit", data.limit.to_string()))
        .insert_header(("x-offset", data.offset.to_string()))
        .insert_header(("x-returned", data.returned.to_string()))
        .insert_header(("x-has-more", data.has_more.to_string()))
        .body(body);
    response.extensions_mut().insert(BusinessCode(0));
    Ok(response)
}

pub fn cell(value: &Value) -> Cow<'_, str> {
    match value {
        Value::Null => Cow::Borrowed(""),
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

pub fn push_line<'a>(body: &mut String, cells: impl Iterator<Item = Cow<'a, str>>) {
    for (i, cell) in cells.enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&quote(&cell));
    }
    body.push_str("\r\n");
}

/// One cell as RFC 4180 writes it: in quotes (with quotes doubled) when it holds a
/// comma, a quote or a line break, else as it is.
pub fn quote(text: &str) -> Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn cells_are_quoted_only_when_they_must_be() {
        assert_eq!(quote("1000.000000"), "1000.000000");
        assert_eq!(quote("a, b"), "\"a, b\"");
        assert_eq!(quote("8\" rack"), "\"8\"\" rack\"");
        assert_eq!(quote("line\nbreak"), "\"line\nbreak\"");
        // Never altered otherwise: a formula-looking cell stays as the data holds it.
        assert_eq!(quote("=1+2"), "=1+2");
    }

    #[test]
    fn accept_is_read_as_media_ranges() {
        let asks = |accept: &str| {
            wanted(
                &TestRequest::default()
                    .insert_header((ACCEPT, accept))
                    .to_http_request(),
            )
        };
        assert!(asks("text/csv"));
        assert!(asks("application/json;q=0.5, Text/CSV"));
        assert!(asks("text/csv; charset=utf-8"));
        assert!(!asks("application/json"));
        assert!(!asks("text/csv;q=0"));
        assert!(!asks("text/csvx"));
        assert!(!wanted(&TestRequest::default().to_http_request()));
    }
}
