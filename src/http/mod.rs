//! The HTTP edge: the response envelope and the per-request context (request id, span,
//! access log).

pub mod envelope;
pub mod request_context;

pub use request_context::RequestId;
