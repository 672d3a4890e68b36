//! The request id: `req_` and a time-ordered UUID, made once per request by the request
//! context, sent back as `X-Request-Id`, in every log line and envelope of the request,
//! and readable anywhere the request's handler runs ([`RequestId::current`]).

use std::future::{ready, Ready};
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::http::header::HeaderName;
use actix_web::{Error, FromRequest, HttpMessage, HttpRequest};

pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(Arc<str>);

tokio::task_local! {
    /// The id of the request whose handler is running: the middleware runs the rest of
    /// the request inside it, so an error rendered far from the handler's arguments
    /// ([`super::error::HttpError`]) still carries it.
    pub(super) static CURRENT: RequestId;
}

impl RequestId {
    pub fn generate() -> Self {
        // Written into a buffer and shared at once: every request makes one, and
        // `format!` took it through the formatting machinery into a `String` that was
        // then copied into the `Arc`.
        let mut text = *b"req_00000000000000000000000000000000";
        uuid::Uuid::now_v7().simple().encode_lower(&mut text[4..]);
        RequestId(std::str::from_utf8(&text).expect("ASCII").into())
    }

    /// The running request's id; a fresh one outside any request (a listener without
    /// the request context).
    pub fn current() -> Self {
        CURRENT
            .try_with(RequestId::clone)
            .unwrap_or_else(|_| RequestId::generate())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id itself, shared rather than copied (a query's call record keeps it).
    pub fn shared(&self) -> Arc<str> {
        self.0.clone()
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromRequest for RequestId {
    type Error = Error;
    type Future = Ready<Result<Self, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let id = req.extensions().get::<RequestId>().cloned();
        ready(Ok(id.unwrap_or_else(RequestId::generate)))
    }
}

#[cfg(test)]
mod tests {
    use super::RequestId;

    #[test]
    fn a_request_id_is_req_and_a_version_7_uuid_in_lower_hex() {
        let (a, b) = (RequestId::generate(), RequestId::generate());
        for id in [&a, &b] {
            let text = id.as_str();
            assert_eq!(text.len(), 36, "{text}");
            let hex = text.strip_prefix("req_").expect("req_ first");
            assert!(
                hex.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
                "{text}"
            );
            assert_eq!(uuid::Uuid::parse_str(hex).unwrap().get_version_num(), 7);
        }
        assert_ne!(a, b);
    }
}
