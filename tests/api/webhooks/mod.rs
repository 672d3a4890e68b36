//! Webhooks (D22), from outside: registering endpoints, signed delivery to a loopback
//! receiver (verified by the Standard Webhooks library from PyPI), retries with the
//! same id, two instances delivering once, nothing lost when an instance dies,
//! destinations refused.
//!
//! Files: `receiver.rs` (the loopback receiver), `delivery.rs` (what arrives, when,
//! signed how), `crash.rs` (an instance killed after the commit), `management.rs` (the
//! API: limits, ownership, bad bodies, the log, the administrators' list).

mod crash;
mod delivery;
mod management;
pub mod receiver;
