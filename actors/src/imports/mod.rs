//! Quote workbook imports (D8): read a `.xlsx` (first sheet) or `.csv` file and check
//! every row, all-or-nothing, while storing the valid quotes in the same transaction,
//! then recalculate `index_daily` and tell every instance to drop its dataset caches.
//!
//! - [`workbook`]: bytes to rows of cells, streaming (and quote rows to bytes, for the
//!   demo and tests).
//! - [`validate`]: rows of cells to quote rows, row by row, or every bad row with its
//!   reason.
//! - [`service`]: the reader thread, the transaction, the import record, the
//!   serialisation of imports.
//!
//! Nothing here knows HTTP; the endpoint (through `Accounts::import`) and the `import`
//! command both run [`Importer::import`].

pub mod service;
pub mod validate;
pub mod workbook;

pub use service::{ImportOutcome, ImportRecord, Importer, Source};
pub use validate::RowError;
