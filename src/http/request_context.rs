//! Per-request context: a fresh `request_id` (`req_` + a time-ordered UUID), the
//! request's root span (every log line of the request runs inside it), the
//! `X-Request-Id` header, one access-log line, and an envelope for any error response
//! that did not come from a handler (unknown path, wrong method, framework refusals).

use std::future::{ready, Ready};
use std::sync::Arc;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, FromRequest, HttpMessage, HttpRequest};
use iq_actors::{ApiError, ErrorCode};
use tracing::{field, Instrument};

use super::envelope::{failure, BusinessCode};

pub const REQUEST_ID_HEADER: &str = "x-request-id";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(Arc<str>);

impl RequestId {
    pub fn generate() -> Self {
        RequestId(format!("req_{}", uuid::Uuid::now_v7().simple()).into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
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

/// The middleware; wrap the whole `App` with `from_fn(request_context)`.
pub async fn request_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let request_id = RequestId::generate();
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %req.method(),
        path = %req.path(),
        status = field::Empty,
        code = field::Empty,
    );
    req.extensions_mut().insert(request_id.clone());
    let started = Instant::now();

    // Handlers turn extractor errors into responses, and no middleware sits inside this
    // one, so an `Err` here is a framework fault: log it and let actix answer it.
    let mut response = match next.call(req).instrument(span.clone()).await {
        Ok(response) => response.map_into_boxed_body(),
        Err(err) => {
            span.in_scope(|| tracing::error!(error = %err, "request failed inside the framework"));
            return Err(err);
        }
    };
    let unenveloped = response
        .response()
        .extensions()
        .get::<BusinessCode>()
        .is_none();
    if unenveloped && (response.status().is_client_error() || response.status().is_server_error()) {
        let refusal = framework_refusal(&request_id, response.status().as_u16());
        response = response.into_response(refusal);
    }
    if let Ok(value) = HeaderValue::from_str(request_id.as_str()) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
    }
    let code = response
        .response()
        .extensions()
        .get::<BusinessCode>()
        .map_or(0, |c| c.0);
    let status = response.status().as_u16();
    span.record("status", status);
    span.record("code", code);
    span.in_scope(|| {
        tracing::info!(
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            status,
            code,
            "request completed"
        );
    });
    Ok(response)
}

/// An envelope for an error the framework produced before or instead of a handler.
fn framework_refusal(request_id: &RequestId, status: u16) -> actix_web::HttpResponse {
    let error = match status {
        404 => ApiError::new(ErrorCode::NotFound, "no such endpoint"),
        405 => ApiError::new(ErrorCode::NotFound, "no such endpoint for this method"),
        400..=499 => ApiError::invalid("the request could not be read"),
        _ => ApiError::internal(format_args!("framework error with status {status}")),
    };
    failure(request_id, &error)
}
