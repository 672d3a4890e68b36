//! The answers given before any handler runs: a CORS preflight for an open endpoint
//! (D16), a connection past its address's cap (answered once, then closed), and a key
//! in the URL of an API call (D12), refused whatever the endpoint.

use actix_web::dev::ServiceRequest;
use actix_web::http::header::HeaderValue;
use actix_web::HttpResponse;

use super::envelope::failure;
use super::listener::OverCap;
use super::request_id::RequestId;

/// The answer `req` gets without a handler, if it is one of those.
pub(super) fn answer(req: &ServiceRequest, request_id: &RequestId) -> Option<HttpResponse> {
    if let Some(answer) = super::cors::preflight(req.method(), req.path(), req.headers()) {
        return Some(answer);
    }
    if let Some(over) = req.conn_data::<OverCap>().copied() {
        let mut response = failure(request_id, &over.refusal());
        response
            .head_mut()
            .set_connection_type(actix_web::http::ConnectionType::Close);
        // Every 429 says when to come back: a connection may close any moment.
        response.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            HeaderValue::from_static("1"),
        );
        return Some(response);
    }
    if req.path().starts_with("/api/") {
        if let Some(error) = super::credentials::key_in_url(req.query_string()) {
            return Some(failure(request_id, &error));
        }
    }
    None
}
