//! How every page leaves: HTML with the security headers (a Content-Security-Policy
//! without inline script, no framing, no sniffing, a strict referrer policy), the
//! right cache rule, and errors as pages ([`PageError`]) rather than JSON envelopes.
//!
//! This is the only place that decides a page's headers; handlers must never set
//! security headers of their own.

use std::fmt;

use actix_web::http::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder, ResponseError};
use askama::Template;
use iq_actors::{ApiError, ErrorCode};

use super::assets::{CSS, ICON, SCRIPT};
use crate::http::envelope::{status_for, BusinessCode};
use crate::http::RequestId;

/// Scripts and styles only from this origin (the embedded assets), no plugins, no
/// framing, forms only to this origin.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

pub type PageResult = Result<HttpResponse, PageError>;

/// Who may keep a copy of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// Shown to a signed-in member, or holding a secret: never stored.
    Private,
    /// The same for every visitor, but it changes with each import: revalidate.
    Visitor,
}

/// A builder with the page headers set.
pub fn page_builder(status: StatusCode, caching: Caching) -> HttpResponseBuilder {
    let mut builder = HttpResponse::build(status);
    builder
        .insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header(("content-security-policy", CONTENT_SECURITY_POLICY))
        .insert_header(("x-frame-options", "DENY"))
        .insert_header(("referrer-policy", "same-origin"))
        .insert_header(("cross-origin-opener-policy", "same-origin"))
        .insert_header((
            "cache-control",
            match caching {
                Caching::Private => "private, no-store",
                Caching::Visitor => "no-cache",
            },
        ))
        // The same address answers visitors and members differently.
        .insert_header(("vary", "Cookie"));
    builder
}

/// A rendered template as a page.
pub fn render(template: &impl Template, status: StatusCode, caching: Caching) -> PageResult {
    let body = template
        .render()
        .map_err(|e| PageError::from(ApiError::internal(format_args!("template: {e}"))))?;
    let mut response = page_builder(status, caching).body(body);
    // A form shown again with its problem is an answer, not a framework refusal.
    response
        .extensions_mut()
        .insert(BusinessCode(if status.is_success() {
            0
        } else {
            code_for(status)
        }));
    Ok(response)
}

/// Whether the service refused what a form asked (the page can show why beside the
/// form) rather than failed at it (a fault, shown as an error page).
pub fn is_refusal(error: &ApiError) -> bool {
    !status_for(error.code).is_server_error()
}

/// The status of a page that shows the `problem` of the form just sent, if it has one:
/// `refused` (how the form was refused), else 200.
pub fn status_with<T>(problem: &Option<T>, refused: StatusCode) -> StatusCode {
    if problem.is_some() {
        refused
    } else {
        StatusCode::OK
    }
}

/// The business code a page's refusal is logged with.
fn code_for(status: StatusCode) -> u32 {
    match status.as_u16() {
        400 => ErrorCode::InvalidRequest.as_u32(),
        401 => ErrorCode::InvalidCredentials.as_u32(),
        403 => ErrorCode::Forbidden.as_u32(),
        404 => ErrorCode::NotFound.as_u32(),
        409 => ErrorCode::Conflict.as_u32(),
        429 => ErrorCode::RateLimited.as_u32(),
        _ => ErrorCode::Internal.as_u32(),
    }
}

/// `303 See Other` to `location` (after a form: the browser then GETs it).
pub fn see_other(location: &str) -> HttpResponseBuilder {
    let mut builder = HttpResponse::SeeOther();
    builder
        .insert_header(("location", location))
        .insert_header(("cache-control", "no-store"));
    builder
}

/// A page that could not be shown: its status, what to tell the reader, and for a
/// 429 when to come back.
#[derive(Debug)]
pub struct PageError {
    pub status: StatusCode,
    pub title: &'static str,
    pub message: String,
    pub code: u32,
    pub retry_after: Option<i64>,
    /// Where to send the browser instead of showing a page (`303 See Other`).
    pub location: Option<&'static str>,
}

impl PageError {
    /// A page that needs a session, asked for without one: the login form instead.
    pub fn log_in_first() -> Self {
        PageError {
            location: Some("/login"),
            // Logged as what it is: a page that needs a session.
            code: ErrorCode::AuthenticationRequired.as_u32(),
            ..PageError::new(StatusCode::SEE_OTHER, "Log in first.")
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        PageError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        PageError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        PageError::new(StatusCode::FORBIDDEN, message)
    }

    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        PageError {
            status,
            title: title_of(status),
            message: message.into(),
            code: code_for(status),
            retry_after: None,
            location: None,
        }
    }
}

fn title_of(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "That request could not be read",
        401 => "Please log in",
        403 => "Not allowed",
        404 => "Not found",
        409 => "That cannot be done now",
        429 => "Too many requests",
        _ => "Something went wrong on our side",
    }
}

impl From<ApiError> for PageError {
    fn from(error: ApiError) -> Self {
        let status = status_for(error.code);
        // An internal cause was logged where it was made; the reader gets the id only.
        let message = if status.is_server_error() {
            "The page could not be prepared. Quote the request id below if you report it."
                .to_owned()
        } else {
            error.message
        };
        PageError {
            status,
            title: title_of(status),
            message,
            code: error.code.as_u32(),
            retry_after: None,
            location: None,
        }
    }
}

impl From<crate::http::HttpError> for PageError {
    fn from(error: crate::http::HttpError) -> Self {
        let retry_after = error.error.retry_after;
        PageError {
            retry_after,
            ..PageError::from(error.error)
        }
    }
}

impl From<actix::MailboxError> for PageError {
    fn from(error: actix::MailboxError) -> Self {
        PageError::from(ApiError::from(error))
    }
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    title: &'a str,
    message: &'a str,
    status: u16,
    request_id: &'a str,
    css: String,
    icon: String,
    script: String,
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        error_page(self)
    }
}

/// The error page; with the request id, so the reader can quote it.
pub fn error_page(error: &PageError) -> HttpResponse {
    if let Some(location) = error.location {
        let mut response = see_other(location).finish();
        response.extensions_mut().insert(BusinessCode(error.code));
        return response;
    }
    let request_id = RequestId::current();
    let page = ErrorPage {
        title: error.title,
        message: &error.message,
        status: error.status.as_u16(),
        request_id: request_id.as_str(),
        css: CSS.href(),
        icon: ICON.href(),
        script: SCRIPT.href(),
    };
    let body = page.render().unwrap_or_else(|_| error.message.clone());
    let mut response = page_builder(error.status, Caching::Private).body(body);
    if let Some(seconds) = error.retry_after {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
    }
    response.extensions_mut().insert(BusinessCode(error.code));
    response
}

/// The page for a refusal the framework made itself (unknown address, wrong method).
pub fn framework_refusal(status: u16) -> HttpResponse {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let message = match status.as_u16() {
        404 => "There is no page at this address.",
        405 => "This page does not take that kind of request.",
        400..=499 => "The request could not be read.",
        _ => "The page could not be prepared.",
    };
    error_page(&PageError::new(
        if status == StatusCode::METHOD_NOT_ALLOWED {
            StatusCode::NOT_FOUND
        } else {
            status
        },
        message,
    ))
}

/// A page answering `error`: with `Retry-After` when the refusal says when to come back
/// (a limit's 429 always does), as the JSON answer would.
pub fn retry_after_if_limited(mut response: HttpResponse, error: &ApiError) -> HttpResponse {
    if let Some(seconds) = error.retry_after {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
    }
    response
}
