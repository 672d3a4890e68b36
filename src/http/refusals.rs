//! Answers for the errors the framework makes before or instead of a handler (an unknown
//! path, a method a route does not take, a body it could not read): an envelope for the
//! API, and for the website's pages the page it provides ([`PageRefusals`]). Answers a
//! handler made (they carry a business code) are never touched.

use actix_web::body::BoxBody;
use actix_web::dev::ServiceResponse;
use iq_actors::{ApiError, ErrorCode};

use super::envelope::{failure, BusinessCode};
use super::request_id::{RequestId, CURRENT};

/// How a website answers the refusals the framework makes on its pages, given to the
/// edge as app data (the edge knows no page): whether a path is a page, and the page for
/// a status. Without it, every refusal is an envelope.
#[derive(Clone, Copy)]
pub struct PageRefusals {
    pub is_page: fn(&str) -> bool,
    pub render: fn(u16) -> actix_web::HttpResponse,
}

/// `response` as it goes out: a 4xx or 5xx no handler made becomes its envelope, or on a
/// page the website's page; anything else is left as it is.
pub(super) fn rewrite(
    response: ServiceResponse<BoxBody>,
    request_id: &RequestId,
) -> ServiceResponse<BoxBody> {
    let failed = response.status().is_client_error() || response.status().is_server_error();
    let unenveloped = response
        .response()
        .extensions()
        .get::<BusinessCode>()
        .is_none();
    if !(failed && unenveloped) {
        return response;
    }
    let status = response.status().as_u16();
    let request = response.request();
    let pages = request.app_data::<PageRefusals>().copied();
    let refusal = match pages {
        Some(pages) if (pages.is_page)(request.path()) => {
            CURRENT.sync_scope(request_id.clone(), || (pages.render)(status))
        }
        _ => framework_refusal(request_id, status),
    };
    response.into_response(refusal)
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
