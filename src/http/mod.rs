//! The HTTP edge: the response envelope, the per-request context (request id, span,
//! access log), JSON bodies, the client's address and the website session.

pub mod client_ip;
pub mod envelope;
pub mod json_body;
pub mod request_context;
pub mod session;

pub use request_context::RequestId;
