//! The domain core of the IQ index service: the dataset catalogue, request validation,
//! the caller's entitlements, index arithmetic, and the actors that serve queries.
//!
//! This crate never touches HTTP types: it speaks in [`ApiError`]s and plain data, so
//! the same logic serves the HTTP API, the ops commands and the tests. The mapping of an
//! error code to an HTTP status lives in the service crate, in one place.

pub mod accounts;
pub mod answer;
pub mod audit;
pub mod auth;
pub mod calendar;
pub mod caller;
pub mod catalogue;
pub mod changes;
pub mod clock;
pub mod coherent_cache;
pub mod dataset;
pub mod db;
pub mod decimal;
pub mod demo;
pub mod error;
pub mod events;
pub mod gzip;
pub mod imports;
pub mod indexes;
pub mod metrics;
pub mod paging;
mod prefixed_id;
pub mod query;
pub mod quota;
pub mod quotes;
pub mod safe_text;
pub mod tushare;
pub mod webhooks;
pub mod wire_date;

pub use error::{ApiError, ErrorCode};
