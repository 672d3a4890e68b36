//! The one way a handler fails: [`HttpError`], an [`ApiError`] answered through actix's
//! [`ResponseError`] as the envelope, with the request's `request_id` (read from the
//! request context, which runs every handler inside it). Handlers return
//! `Result<_, HttpError>` and use `?` on anything that yields an `ApiError`.
//!
//! The mapping from business code to HTTP status stays in [`super::envelope`]; this
//! module must never decide a status of its own. Internal causes were logged where the
//! `ApiError` was made ([`ApiError::internal`]), inside the request's span.

use std::fmt;

use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use iq_actors::ApiError;

use super::envelope::{failure, status_for};
use super::RequestId;

/// An `ApiError` on its way out as an HTTP response, with `Retry-After` when the
/// refusal says when to come back (`ApiError::retry_after`, set where the limit is).
#[derive(Debug)]
pub struct HttpError {
    pub error: ApiError,
}

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        HttpError { error }
    }
}

impl From<actix::MailboxError> for HttpError {
    fn from(error: actix::MailboxError) -> Self {
        HttpError::from(ApiError::from(error))
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl ResponseError for HttpError {
    fn status_code(&self) -> StatusCode {
        status_for(self.error.code)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = failure(&RequestId::current(), &self.error);
        if let Some(seconds) = self.error.retry_after {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
        }
        response
    }
}
