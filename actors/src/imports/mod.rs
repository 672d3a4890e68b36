//! Quote workbook imports (D8): read a `.xlsx` (first sheet) or `.csv` file and check
//! every row, all-or-nothing, while storing the valid quotes in the same transaction,
//! then recalculate `index_daily` and tell every instance to drop its dataset caches.
//!
//! - [`workbook`]: bytes to rows of cells, streaming.
//! - [`write`]: quote rows to a file (CSV for the demo data; `.xlsx` for tests).
//! - [`archive`]: an `.xlsx` archive checked before it is opened (part sizes, and the
//!   parts the workbook reader holds whole).
//! - [`validate`]: rows of cells to quote rows, row by row, or the bad rows with their
//!   reasons; one file a rule (header, row, columns, amounts, across rows).
//! - [`bounds`]: the bounds every import runs under, so that no file can exhaust the
//!   service (D8): sheet dimensions, cells, inflated part sizes, cell length, errors
//!   listed, echoed values.
//! - [`service`]: the reader thread, the transaction, the import record, the
//!   serialisation of imports.
//!
//! Nothing here knows HTTP; the endpoint (through `Accounts::import`) and the `import`
//! command both run [`Importer::import`], under its [`ImportLimits`].

pub mod archive;
pub mod bounds;
pub mod service;
pub mod validate;
pub mod workbook;
pub mod write;

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod proptests;

pub use crate::quotes::store::IndexChanges;
pub use bounds::ImportLimits;
pub use service::{ImportDetail, ImportOutcome, ImportRecord, Importer, Source};
pub use validate::{Rejection, RowError};
