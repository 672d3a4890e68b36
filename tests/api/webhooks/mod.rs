//! Webhooks (D22), from outside: registering endpoints, signed delivery to a loopback
//! receiver (verified by the Standard Webhooks library from PyPI), retries with the
//! same id, two instances delivering once, destinations refused.
//!
//! Files: `receiver.rs` (the loopback receiver), `delivery.rs` (what arrives, when,
//! signed how), `management.rs` (the API: limits, ownership, bad bodies, the log).

mod delivery;
mod management;
pub mod receiver;
