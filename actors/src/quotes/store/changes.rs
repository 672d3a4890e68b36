//! What one write of quotes changed: per index ([`IndexChanges`]) and in all
//! ([`Recalculated`]). Plain data, counted by `recalculation` as rows are written and
//! gathered by `writer`; it reads nothing and writes nothing.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// What a write changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recalculated {
    pub quotes: usize,
    pub daily_rows: usize,
    /// Earliest recalculated date of each index.
    pub from: BTreeMap<String, NaiveDate>,
    /// What changed for each recalculated index (the composite included), by code.
    pub changes: Vec<IndexChanges>,
}

/// What one write changed for one index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IndexChanges {
    pub index_code: String,
    /// Days of quotes of the index the batch held that had none before.
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub quote_days_added: usize,
    /// Days of quotes of the index the batch replaced (whatever their new values).
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub quote_days_replaced: usize,
    /// `index_daily` rows of the index written that did not exist before.
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub daily_rows_added: usize,
    /// `index_daily` rows of the index that existed and now hold another value in any
    /// column (rows rewritten with the same values are not counted).
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub daily_rows_revised: usize,
}
