//! The dataset actor and what it needs: SQL built from the catalogue, rows rendered as
//! a page, and the caches (pages, page boundaries, index registry, delay cutoffs).

mod actor;
mod boundaries;
mod cell_text;
mod columnar;
mod keyset;
mod page;
mod sql;

pub use actor::{DatasetActor, DatasetSettings, Describe, Entitlements, Fetch};
pub use columnar::{data_type, Columnar, Encoded};
pub use page::{Page, Place};
