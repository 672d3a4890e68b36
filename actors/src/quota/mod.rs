//! Step 7 of the check chain: quotas per UTC minute and day, per key (spec part 8, D6)
//! and per account (D11), exact across instances that share one database, and the
//! call log.
//!
//! - [`window`]: the two windows and a key's effective limits.
//! - [`subject`]: whom a call is charged to (its key and its owner's account), and the
//!   account caps of D11.
//! - [`lease`]: the pure bookkeeping of one subject's leases.
//! - [`decision`]: the decision for one call over all its subjects.
//! - [`status`]: what the response reports, and which window binds.
//! - [`store`]: the statements (lease, flush, prune). Usage reads for the back office
//!   live in [`crate::accounts::usage`].
//! - [`flusher`]: writes spent calls and call records in batches, exactly once.
//! - [`actor`]: the QuotaActor that ties them together; [`messages`]: what it is asked;
//!   [`ledger`]: what it holds in memory; [`book`]: that memory behind a lock, and the
//!   charges settled from it on the caller's thread; [`shards`]: one QuotaActor per
//!   thread, each owning a share of the accounts, and the handle callers charge through.
//!
//! Nothing here knows HTTP: the headers are rendered from [`Status`] by the service.

pub mod actor;
mod book;
pub mod decision;
pub mod flusher;
pub mod lease;
mod ledger;
pub mod messages;
pub mod shards;
pub mod status;
pub mod store;
pub mod subject;
#[cfg(test)]
mod test_clock;
pub mod window;

pub use actor::{QuotaActor, QuotaSettings};
pub use messages::{Admission, Charge, Drain, DrainReport, QuotaStats, ShowStats};
pub use shards::QuotaShards;
pub use status::{Status, WindowStatus};
pub use store::{CallRecord, QuotaStore};
pub use subject::{account_limits, Subject};
pub use window::{Limits, Window};
