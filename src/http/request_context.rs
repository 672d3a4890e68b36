//! Per-request context: a fresh `request_id` (`req_` + a time-ordered UUID), the
//! request's root span (every log line of the request runs inside it, and it is the root
//! of the request's trace, continuing an incoming W3C `traceparent`), the `X-Request-Id`
//! header, one access-log line, the request metrics, and an envelope for any error
//! response that did not come from a handler (unknown path, wrong method, framework
//! refusals).
//!
//! The root span carries who called (`caller`: key, session or visitor; `key_id` or
//! `user_id`), never a credential.

use std::future::{ready, Ready};
use std::sync::Arc;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, X_CONTENT_TYPE_OPTIONS};
use actix_web::middleware::Next;
use actix_web::{Error, FromRequest, HttpMessage, HttpRequest};
use iq_actors::metrics::{metrics, RequestLabels};
use iq_actors::{ApiError, ErrorCode};
use tracing::{field, Instrument, Span};

use super::access_log::AccessLog;
use super::envelope::{failure, BusinessCode};
use super::listener::OverCap;
use crate::telemetry::propagation::continue_trace;
use crate::telemetry::ACCESS_TARGET;

pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(Arc<str>);

tokio::task_local! {
    /// The id of the request whose handler is running: the middleware runs the rest of
    /// the request inside it, so an error rendered far from the handler's arguments
    /// ([`super::error::HttpError`]) still carries it.
    static CURRENT: RequestId;
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

/// How a website answers the refusals the framework makes on its pages, given to the
/// edge as app data (the edge knows no page): whether a path is a page, and the page for
/// a status. Without it, every refusal is an envelope.
#[derive(Clone, Copy)]
pub struct PageRefusals {
    pub is_page: fn(&str) -> bool,
    pub render: fn(u16) -> actix_web::HttpResponse,
}

/// The middleware; wrap the whole `App` with `from_fn(request_context)`.
pub async fn request_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let request_id = RequestId::generate();
    let span = tracing::info_span!(
        "request",
        otel.name = field::Empty,
        otel.kind = "server",
        otel.status_code = field::Empty,
        request_id = request_id.as_str(),
        http.request.method = req.method().as_str(),
        url.path = req.path(),
        http.route = field::Empty,
        http.response.status_code = field::Empty,
        code = field::Empty,
        caller = field::Empty,
        key_id = field::Empty,
        user_id = field::Empty,
        dataset = field::Empty,
    );
    // Before anything starts the span, so sampling follows the caller's decision.
    continue_trace(&span, req.headers());
    let method = req.method().clone();
    req.extensions_mut().insert(request_id.clone());
    let started = Instant::now();

    // A cross-origin preflight for an open endpoint (D16) needs no handler.
    if let Some(answer) = super::cors::preflight(req.method(), req.path(), req.headers()) {
        let response = req.into_response(answer);
        return Ok(finish(response, &request_id, &span, &method, started));
    }

    // A connection past its address's cap answers once and closes.
    if let Some(over) = req.conn_data::<OverCap>().copied() {
        let mut response = failure(&request_id, &over.refusal());
        response
            .head_mut()
            .set_connection_type(actix_web::http::ConnectionType::Close);
        // Every 429 says when to come back: a connection may close any moment.
        response.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            HeaderValue::from_static("1"),
        );
        let response = req.into_response(response);
        return Ok(finish(response, &request_id, &span, &method, started));
    }

    // A key in the URL (D12) is refused before any handler runs, whatever the endpoint.
    if req.path().starts_with("/api/") {
        if let Some(error) = super::credentials::key_in_url(req.query_string()) {
            let response = req.into_response(failure(&request_id, &error));
            return Ok(finish(response, &request_id, &span, &method, started));
        }
    }

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
    let unenveloped = response
        .response()
        .extensions()
        .get::<BusinessCode>()
        .is_none();
    if unenveloped && (response.status().is_client_error() || response.status().is_server_error()) {
        let status = response.status().as_u16();
        let request = response.request();
        let pages = request.app_data::<PageRefusals>().copied();
        let refusal = match pages {
            Some(pages) if (pages.is_page)(request.path()) => {
                CURRENT.sync_scope(request_id.clone(), || (pages.render)(status))
            }
            _ => framework_refusal(&request_id, status),
        };
        response = response.into_response(refusal);
    }
    Ok(finish(response, &request_id, &span, &method, started))
}

/// Stamps the request id and `X-Content-Type-Options: nosniff`, names and fills the
/// root span, records the metrics and writes the access-log line.
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
    // One record for all of them: each record is a trip through every layer.
    // `otel.name` is exported as `{method} {route}`, as the conventions name server
    // spans; formatted only by the export layer, so a process that exports nothing
    // never builds it.
    tracing::record_all!(
        span,
        otel.name = format_args!("{method} {route}"),
        http.route = route.as_str(),
        http.response.status_code = status,
        code = code,
        dataset = (!dataset.is_empty()).then_some(dataset),
        otel.status_code = (status >= 500).then_some("error"),
    );
    // Probes and scrapes arrive every few seconds from machines, not people: their
    // lines are debug, so the access log stays the callers' (failures still show).
    let routine = matches!(route.as_str(), "/healthz" | "/readyz" | "/metrics") && status < 500;
    let kept = response
        .request()
        .app_data::<AccessLog>()
        .copied()
        .unwrap_or_default()
        .keeps(status);
    metrics()
        .requests
        .get_or_create(&RequestLabels {
            route,
            dataset,
            code,
        })
        .observe(started.elapsed().as_secs_f64());
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    // Its own target, so traces can leave it out: the request span already carries the
    // status, the code and (as its length) the latency, and copying every access line
    // into its span as an event doubled what the exporter encoded per request.
    span.in_scope(|| {
        if routine || !kept {
            tracing::debug!(target: ACCESS_TARGET, latency_ms, status, code, "request completed");
        } else {
            tracing::info!(target: ACCESS_TARGET, latency_ms, status, code, "request completed");
        }
    });
    response
}

/// The dataset a query asked for (a catalogue name, so a bounded label), left in the
/// response's extensions by the query handler for the trace and the metrics.
#[derive(Debug, Clone, Copy)]
pub struct QueryDataset(pub &'static str);

/// Records who is calling on the request's root span (`caller` and the key or user id),
/// from wherever the identity is resolved. `span` is the root span: fields a span does
/// not declare are dropped silently.
pub fn record_caller(span: &Span, caller: &iq_actors::caller::Caller) {
    use iq_actors::caller::Caller;
    match caller {
        Caller::Key { key_id, owner, .. } => {
            tracing::record_all!(
                span,
                key_id = &**key_id,
                caller = caller.kind(),
                user_id = owner.user_id,
            );
        }
        Caller::Session(account) => record_user(span, caller.kind(), account.user_id),
        Caller::Visitor => {
            span.record("caller", caller.kind());
        }
    }
}

/// [`record_caller`] for a back-office session, which the guard resolves without a
/// `Caller`.
pub fn record_session(span: &Span, user_id: i64) {
    record_user(span, "session", user_id);
}

fn record_user(span: &Span, kind: &'static str, user_id: i64) {
    tracing::record_all!(span, caller = kind, user_id = user_id);
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
