//! Webhooks (D22, D27), from outside: registering endpoints, signed delivery to a
//! loopback receiver (verified by the Standard Webhooks library from PyPI), retries with
//! the same id, two instances delivering once, nothing lost when an instance dies,
//! destinations refused, fair delivery, rotation and recovery.
//!
//! Files: `receiver.rs` (the loopback receiver), `delivery.rs` (what arrives, when,
//! signed how), `crash.rs` (an instance killed after the commit), `management.rs` (the
//! API: limits, ownership, bad bodies, the log, the administrators' list),
//! `fairness.rs` (silent endpoints, test sends), `rotation.rs` (rotation, recovery).

mod crash;
mod delivery;
mod fairness;
mod management;
pub mod receiver;
mod rotation;
