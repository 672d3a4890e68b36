//! Step 7 of the check chain: per-key quotas per UTC minute and day (spec part 8, D6),
//! exact across instances that share one database, and the call log.
//!
//! - [`lease`]: the pure bookkeeping of one key's leases and the decision for one call.
//! - [`store`]: the statements (lease, flush, prune). Usage reads for the back office
//!   live in [`crate::accounts::usage`].
//! - [`flusher`]: writes spent calls and call records in batches, exactly once.
//! - [`actor`]: the QuotaActor that ties them together.
//!
//! Nothing here knows HTTP: the headers are rendered from [`Status`] by the service.

pub mod actor;
pub mod flusher;
pub mod lease;
pub mod store;

pub use actor::{
    Admission, Charge, Drain, QuotaActor, QuotaSettings, QuotaStats, Record, ShowStats,
};
pub use lease::{Limits, Status, Window, WindowStatus};
pub use store::{CallRecord, QuotaStore};
