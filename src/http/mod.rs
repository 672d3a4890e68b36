//! The HTTP edge: the response envelope, the per-request context (request id, span,
//! access log), JSON bodies, the client's address, the website session and the
//! rate-limit headers.

pub mod access_log;
pub mod answer;
pub mod body_pace;
pub mod client_ip;
pub mod columnar_answer;
pub mod compress;
pub mod cors;
pub mod credentials;
pub mod csv_answer;
pub mod drain;
mod early_answers;
pub mod envelope;
pub mod error;
pub mod guard;
mod head;
pub mod json_body;
pub mod listener;
pub mod page_format;
pub mod protection;
pub mod rate_limit;
pub mod refusals;
pub mod request_context;
pub mod request_id;
mod request_log;
pub mod request_span;
pub mod session;
pub mod strict_json;
pub mod upload;

pub use answer::Answer;
pub use error::HttpError;
pub use guard::{anonymous_author, author, Admin, AnyUser, Body, SessionGuard, SuperAdmin};
pub use request_id::RequestId;
