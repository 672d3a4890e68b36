//! The dataset catalogue: every dataset of `POST /api/v1/query`, declared once, as data.
//!
//! Validation ([`crate::query`]), SQL building ([`crate::dataset::sql`]), the docs and the
//! Python client's local checks all read this table. Column expressions here are static
//! SQL written by us; client input never becomes SQL text (it is bound as parameters).
//!
//! SQL templates use placeholders the builder fills: `{where}` (the filters),
//! `{cutoff}` (the caller's delay cutoff date), `{detailed}` (the indexes whose
//! detail fields the caller may see), `{index_daily}` / `{index_quotes}` (the
//! table, or with `as_of` the rows current at that instant: D17), and
//! `{periods:week}` / `{periods:month}` (a period dataset's rows, [`periods`]).

mod datasets;
pub mod periods;
#[cfg(feature = "openapi")]
mod schema;
mod tushare;
mod types;

pub use datasets::DATASETS;
#[cfg(feature = "openapi")]
pub use schema::DatasetName;
pub use tushare::TUSHARE_DATASETS;
pub use types::{Dataset, FieldDef, ParamDef, ParamRole, Scope, ValueKind, Versioned, Wire};

/// The dataset named `api_name`, if it exists.
pub fn dataset(api_name: &str) -> Option<&'static Dataset> {
    DATASETS.iter().find(|d| d.api_name == api_name)
}

/// The dataset Tushare's wire (D24) names `api_name` (`index_daily`, `trade_cal`, ...),
/// if it serves one.
pub fn tushare_dataset(api_name: &str) -> Option<&'static Dataset> {
    TUSHARE_DATASETS
        .iter()
        .find(|d| d.api_name.strip_prefix("tushare.") == Some(api_name))
}

/// The api_names, in catalogue order.
pub fn api_names() -> Vec<&'static str> {
    DATASETS.iter().map(|d| d.api_name).collect()
}

#[cfg(test)]
mod tests;
