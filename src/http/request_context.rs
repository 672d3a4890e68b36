//! The per-request middleware, composing the edge's jobs around every request in order:
//! a fresh request id ([`super::request_id`]), the root span ([`super::request_span`]),
//! the answers given before any handler ([`super::early_answers`]), a `HEAD` routed as
//! its `GET` ([`super::head`]; the span and the access line keep `HEAD`), the handler run
//! inside both, CORS headers on the way out, the framework's refusals turned into
//! envelopes or pages ([`super::refusals`]), then the `X-Request-Id` and `nosniff`
//! headers, the answer on the span, the metrics and the access line
//! ([`super::request_log`]). Each job is its own file; this one only orders them, and
//! must never grow a job of its own.

use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, X_CONTENT_TYPE_OPTIONS};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage};
use tracing::{Instrument, Span};

use super::access_log::AccessLog;
use super::envelope::BusinessCode;
use super::request_id::{RequestId, CURRENT, REQUEST_ID_HEADER};
use super::{early_answers, head, refusals, request_log, request_span};

/// The dataset a query asked for (a catalogue name, so a bounded label), left in the
/// response's extensions by the query handler for the trace and the metrics.
#[derive(Debug, Clone, Copy)]
pub struct QueryDataset(pub &'static str);

/// The middleware; wrap the whole `App` with `from_fn(request_context)`.
pub async fn request_context(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let request_id = RequestId::generate();
    let span = request_span::open(&req, &request_id);
    let method = req.method().clone();
    req.extensions_mut().insert(request_id.clone());
    let started = Instant::now();

    if let Some(answer) = early_answers::answer(&req, &request_id) {
        let response = req.into_response(answer);
        return Ok(finish(response, &request_id, &span, &method, started));
    }

    head::route_as_get(&mut req);
    // Handlers turn extractor errors into responses, and no middleware sits inside this
    // one, so an `Err` here is a framework fault: log it and let actix answer it.
    let handled = CURRENT.scope(request_id.clone(), next.call(req).instrument(span.clone()));
    let mut response = match handled.await {
        Ok(response) => response.map_into_boxed_body(),
        Err(err) => {
            span.in_scope(|| tracing::error!(error = %err, "request failed inside the framework"));
            return Err(err);
        }
    };
    let request = response.request();
    if super::cors::applies(request.path(), request.headers()) {
        super::cors::decorate(response.headers_mut());
    }
    let response = refusals::rewrite(response, &request_id);
    Ok(finish(response, &request_id, &span, &method, started))
}

/// Stamps the request id and `X-Content-Type-Options: nosniff`, fills the root span
/// with the answer, and records the metrics and the access line.
fn finish(
    mut response: ServiceResponse<BoxBody>,
    request_id: &RequestId,
    span: &Span,
    method: &actix_web::http::Method,
    started: Instant,
) -> ServiceResponse<BoxBody> {
    if let Ok(value) = HeaderValue::from_str(request_id.as_str()) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    // Every answer is what its content type says: JSON, CSV, a page, an asset.
    response
        .headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    let code = response
        .response()
        .extensions()
        .get::<BusinessCode>()
        .map_or(0, |c| c.0);
    let status = response.status().as_u16();
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let dataset = response
        .response()
        .extensions()
        .get::<QueryDataset>()
        .map_or("", |d| d.0);
    request_span::record_answer(span, method, &route, status, code, dataset);
    let access_log = response
        .request()
        .app_data::<AccessLog>()
        .copied()
        .unwrap_or_default();
    request_log::completed(span, route, dataset, status, code, access_log, started);
    response
}
