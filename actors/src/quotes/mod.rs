//! Quotes and the index arithmetic of D8: the pure calculation ([`recalc`]) and the
//! transactional write path that stores quotes and recalculates `index_daily` ([`store`]).

pub mod history;
pub mod recalc;
pub mod store;

pub use recalc::{DailyRow, QuoteRow};
