//! The dataset actor and what it needs: SQL built from the catalogue, rows rendered as
//! a page, and the caches (pages, index registry, delay cutoffs).

mod actor;
mod page;
mod sql;

pub use actor::{DatasetActor, DatasetSettings, Describe, Entitlements, Fetch};
pub use page::Page;
