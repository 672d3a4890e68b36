//! The response envelope `{request_id, code, message, data}` (spec 4.1, part 7) and the
//! one mapping from business code to HTTP status. Every response of the service, success
//! or error, is built here.

use actix_web::http::header::{HeaderValue, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use iq_actors::dataset::Page;
use iq_actors::error::RowError;
use iq_actors::gzip::splice;
use iq_actors::{ApiError, ErrorCode};
use serde::Serialize;

use super::{compress, RequestId};

/// The business code of a response, left in its extensions for the access log and trace.
#[derive(Debug, Clone, Copy)]
pub struct BusinessCode(pub u32);

/// The HTTP status of a business code, as [`ErrorCode`]'s table gives it.
pub fn status_for(code: ErrorCode) -> StatusCode {
    StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    request_id: &'a str,
    code: u32,
    message: &'a str,
    data: T,
    /// A rejected import's first bad rows (at most 1,000); absent from every other
    /// response.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    errors: &'a [RowError],
    /// How many problems the rejected import has in all; present with `errors`.
    #[serde(skip_serializing_if = "Option::is_none")]
    errors_total: Option<usize>,
}

fn json(status: StatusCode, code: u32, body: Vec<u8>) -> HttpResponse {
    // A static value: a `&str` would be copied into a header value of its own.
    let mut response = HttpResponse::build(status)
        .insert_header((CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .body(body);
    response.extensions_mut().insert(BusinessCode(code));
    response
}

/// 200 with `data`.
pub fn success<T: Serialize>(request_id: &RequestId, data: T) -> HttpResponse {
    let envelope = Envelope {
        request_id: request_id.as_str(),
        code: 0,
        message: "ok",
        data,
        errors: &[],
        errors_total: None,
    };
    match serde_json::to_vec(&envelope) {
        Ok(body) => json(StatusCode::OK, 0, body),
        Err(err) => failure(request_id, &ApiError::internal(err)),
    }
}

/// 200 with a page's `data` as it was rendered (and cached): the envelope is written
/// around its bytes, never re-serialised. When the client takes gzip and the answer is
/// large enough to be compressed (D16), the page's compressed form, made once per
/// cached page, is spliced between this answer's own head and tail.
pub fn success_page(
    request_id: &RequestId,
    page: &Page,
    gzip: bool,
) -> Result<HttpResponse, ApiError> {
    #[derive(Serialize)]
    struct Head<'a> {
        request_id: &'a str,
        code: u32,
        message: &'a str,
    }
    let head = Head {
        request_id: request_id.as_str(),
        code: 0,
        message: "ok",
    };
    page_answer(&head, page, gzip)
}

/// 200 with Tushare's envelope (D24) around `page`: `{request_id, code: 0, msg: "",
/// data}`.
pub fn tushare_page(
    request_id: &RequestId,
    page: &Page,
    gzip: bool,
) -> Result<HttpResponse, ApiError> {
    let head = TushareHead {
        request_id: request_id.as_str(),
        code: 0,
        msg: "",
    };
    page_answer(&head, page, gzip)
}

/// A refusal on Tushare's wire (D24): HTTP 200 (the SDK drops any other status and
/// returns an empty frame), or the error's own status when it is a 5xx, with `code`
/// and `msg` and `data` null.
pub fn tushare_failure(request_id: &RequestId, error: &ApiError) -> HttpResponse {
    #[derive(Serialize)]
    struct Refusal<'a> {
        #[serde(flatten)]
        head: TushareHead<'a>,
        data: (),
    }
    let code = error.code.as_u32();
    let body = Refusal {
        head: TushareHead {
            request_id: request_id.as_str(),
            code,
            msg: &error.message,
        },
        data: (),
    };
    let status = match status_for(error.code) {
        status if status.is_server_error() => status,
        _ => StatusCode::OK,
    };
    json(status, code, serde_json::to_vec(&body).unwrap_or_default())
}

#[derive(Serialize)]
struct TushareHead<'a> {
    request_id: &'a str,
    code: u32,
    msg: &'a str,
}

/// `{...head, "data": <page>}`, spliced around the page's kept JSON (or its kept
/// compressed form).
fn page_answer(head: &impl Serialize, page: &Page, gzip: bool) -> Result<HttpResponse, ApiError> {
    // The envelope's fields in `Envelope`'s order, `data` last: `{...head,"data":<page>}`.
    let mut before = serde_json::to_vec(head).unwrap_or_default();
    before.pop();
    before.extend_from_slice(b",\"data\":");
    let data = page.json()?.get().as_bytes();
    if gzip && before.len() + data.len() + 1 >= compress::MIN_SIZE {
        let body = splice(&before, page.deflated()?, b"}");
        let mut response = json(StatusCode::OK, 0, body);
        compress::mark_gzip(response.headers_mut());
        return Ok(response);
    }
    let mut body = before;
    body.reserve(data.len() + 1);
    body.extend_from_slice(data);
    body.push(b'}');
    Ok(json(StatusCode::OK, 0, body))
}

/// The error's status, with `data` null.
pub fn failure(request_id: &RequestId, error: &ApiError) -> HttpResponse {
    let code = error.code.as_u32();
    let envelope = Envelope {
        request_id: request_id.as_str(),
        code,
        message: &error.message,
        data: (),
        errors: &error.errors,
        errors_total: (!error.errors.is_empty()).then_some(error.errors_total),
    };
    // Serialising strings and integers cannot fail.
    let body = serde_json::to_vec(&envelope).unwrap_or_default();
    json(status_for(error.code), code, body)
}

/// 503 with code 50000: the service is up but cannot serve (readiness probes). The one
/// answer whose status is not its code's, so it is decided here with the others.
pub fn unavailable(request_id: &RequestId, message: String) -> HttpResponse {
    let error = ApiError::new(ErrorCode::Internal, message);
    let mut response = failure(request_id, &error);
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
}
