//! The transactional write path of quotes: replace the (date, index) days a batch
//! contains, then recalculate `index_daily` from the earliest affected date onward for
//! each affected index and for the composite (D8). Callers pass an open transaction and
//! commit it; a failure leaves no trace.
//!
//! One job a file:
//!
//! - `composites`: the composite indexes and their weighted bases, as data
//!   ([`Composite`], [`composites()`]).
//! - `writer`: [`QuoteWriter`], a batch written piece by piece and recalculated once,
//!   and what it changed ([`Recalculated`], [`IndexChanges`]).
//! - `recalculation`: the statements a recalculation runs (starting points, the
//!   quotes a batch left in place, the composite's inputs, `index_daily` out and in).
//! - `copy_in`: quote and daily rows into their tables (or their history tables) by
//!   binary `COPY`, for this path and for [`super::history`].
//!
//! Nothing here commits, and nothing here does index arithmetic itself: that is the
//! pure [`super::recalc`].

mod changes;
mod composites;
mod copy_in;
mod recalculation;
mod writer;

pub use changes::{IndexChanges, Recalculated};
pub use composites::{composites, Composite};
pub(crate) use copy_in::copy_rows;
pub use writer::QuoteWriter;
