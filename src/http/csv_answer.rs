//! A query's page as CSV (D18), for callers that send `Accept: text/csv`: a header row
//! of the page's fields, then one line per item, RFC 4180 quoting and CRLF line ends.
//! Cells are exactly the JSON answer's values (decimals and dates as strings, booleans
//! `true`/`false`, integers as digits, null as an empty cell), never altered: this
//! module must not escape spreadsheet formulas (a client asks for that itself). The
//! page's place goes in headers: `X-Limit`, `X-Offset`, `X-Returned`, `X-Has-More`.
//! Refusals stay JSON envelopes.

use std::borrow::Cow;

use actix_web::{HttpResponse, HttpResponseBuilder};
use iq_actors::dataset::Page;
use iq_actors::ApiError;
use serde::Deserialize;
use serde_json::Value;

use super::envelope::BusinessCode;

#[derive(Deserialize)]
struct PageData {
    fields: Vec<String>,
    items: Vec<Vec<Value>>,
}

/// The page as a CSV answer.
pub fn answer(page: &Page) -> Result<HttpResponse, ApiError> {
    let json = page.json()?.get();
    let data: PageData = serde_json::from_str(json)
        .map_err(|e| ApiError::internal(format_args!("a page's data: {e}")))?;
    let mut body = String::with_capacity(json.len());
    push_line(
        &mut body,
        data.fields.iter().map(|f| Cow::Borrowed(f.as_str())),
    );
    for item in &data.items {
        push_line(&mut body, item.iter().map(cell));
    }
    let mut builder = HttpResponse::Ok();
    builder.insert_header(("content-type", "text/csv; charset=utf-8"));
    with_place(&mut builder, page);
    let mut response = builder.body(body);
    response.extensions_mut().insert(BusinessCode(0));
    Ok(response)
}

/// The page's place in the headers of an answer that is not the envelope (D18, D29).
pub fn with_place(builder: &mut HttpResponseBuilder, page: &Page) {
    let place = page.place;
    builder
        .insert_header(("x-limit", place.limit.to_string()))
        .insert_header(("x-offset", place.offset.to_string()))
        .insert_header(("x-returned", place.returned.to_string()))
        .insert_header(("x-has-more", place.has_more.to_string()));
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

    #[test]
    fn cells_are_quoted_only_when_they_must_be() {
        assert_eq!(quote("1000.000000"), "1000.000000");
        assert_eq!(quote("a, b"), "\"a, b\"");
        assert_eq!(quote("8\" rack"), "\"8\"\" rack\"");
        assert_eq!(quote("line\nbreak"), "\"line\nbreak\"");
        // Never altered otherwise: a formula-looking cell stays as the data holds it.
        assert_eq!(quote("=1+2"), "=1+2");
    }
}
