//! Quote workbook imports (D8): read a `.xlsx` (first sheet) or `.csv` file, validate
//! every row all-or-nothing, then replace the quotes and recalculate `index_daily` in
//! one transaction that also tells every instance to drop its dataset caches.
//!
//! - [`workbook`]: bytes to cells (and cells to bytes, for the demo and tests).
//! - [`validate`]: cells to quote rows, or every bad row with its reason.
//! - [`service`]: the transaction, the import record, the serialisation of imports.
//!
//! Nothing here knows HTTP; the endpoint (through `Accounts::import`) and the `import`
//! command both run [`Importer::import`].

pub mod service;
pub mod validate;
pub mod workbook;

pub use service::{ImportOutcome, ImportRecord, Importer, Source};
pub use validate::RowError;
