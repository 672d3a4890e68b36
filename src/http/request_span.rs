//! The request's root span: every log line of the request runs inside it, and it is the
//! root of the request's trace, continuing an incoming W3C `traceparent`. Opened with
//! what the request says ([`open`]), filled with who called ([`record_caller`], from
//! wherever the identity is resolved) and with the answer ([`record_answer`]).
//!
//! It carries who called (`caller`: key, session or visitor; `key_id` or `user_id`),
//! never a credential.

use actix_web::dev::ServiceRequest;
use tracing::{field, Span};

use super::request_id::RequestId;
use crate::telemetry::propagation::continue_trace;

/// The root span of `req`, continuing the caller's trace when it sent one.
pub(super) fn open(req: &ServiceRequest, request_id: &RequestId) -> Span {
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
    span
}

/// What the answer was, in one record: each record is a trip through every layer.
pub(super) fn record_answer(
    span: &Span,
    method: &actix_web::http::Method,
    route: &str,
    status: u16,
    code: u32,
    dataset: &str,
) {
    // `otel.name` is exported as `{method} {route}`, as the conventions name server
    // spans; formatted only by the export layer, so a process that exports nothing
    // never builds it.
    tracing::record_all!(
        span,
        otel.name = format_args!("{method} {route}"),
        http.route = route,
        http.response.status_code = status,
        code = code,
        dataset = (!dataset.is_empty()).then_some(dataset),
        otel.status_code = (status >= 500).then_some("error"),
    );
}

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
