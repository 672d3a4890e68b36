//! The schemas of `/api/v1/admin/imports` (handled in `src/routes/imports.rs`): quote
//! files in, all or nothing (D8), and the record of every
//! attempt. Administrators and super administrators.

#![allow(dead_code)] // mirrors: the types only derive schemas, for the handlers' `#[utoipa::path]`

use std::collections::BTreeMap;

use utoipa::ToSchema;

use super::errors::RowErrorSchema;

/// The upload: one file part named `file`.
#[derive(ToSchema)]
pub struct ImportUpload {
    /// the quote file, `.xlsx` or `.csv` by its file name
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    file: String,
}

/// An accepted file.
#[derive(ToSchema)]
pub struct ImportOutcome {
    import_id: String,
    file_name: String,
    /// quote rows stored
    quotes: u64,
    /// `index_daily` rows written by the recalculation
    daily_rows: u64,
    /// the earliest recalculated date (`YYYYMMDD`) of each index, by code
    recalculated_from: BTreeMap<String, String>,
    /// what changed for each recalculated index (the composite included), by code
    changes: Vec<IndexChanges>,
    /// when its data was published: `as_of` this instant or later sees it
    #[schema(format = DateTime)]
    published_at: String,
}

/// What one import changed for one index.
#[derive(ToSchema)]
pub struct IndexChanges {
    index_code: String,
    /// days of quotes the file held and the database did not
    quote_days_added: u64,
    /// days whose quotes it replaced, whatever their new values
    quote_days_replaced: u64,
    /// `index_daily` rows that did not exist before
    daily_rows_added: u64,
    /// rows that existed and now hold another value in any column
    daily_rows_revised: u64,
}

/// An import attempt as the list shows it.
#[derive(ToSchema)]
pub struct ImportRecord {
    id: String,
    /// who imported it; null for the command line and the demo data
    #[schema(required = true)]
    username: Option<String>,
    /// `http`, `command` or `demo`
    source: String,
    file_name: String,
    /// data rows read (header excluded); 0 when refused before reading
    rows: i32,
    /// `accepted`, `rejected` or `failed`
    result: String,
    /// problems found when rejected (all of them, listed or not)
    errors: i32,
    message: String,
    #[schema(format = DateTime)]
    started_at: String,
    #[schema(format = DateTime)]
    finished_at: String,
    /// when an accepted import's data was published (`as_of` this instant or later
    /// sees it); null for one not accepted or accepted before this was kept
    #[schema(required = true, format = DateTime)]
    published_at: Option<String>,
    /// accepted: per recalculated index; `[]` for a refused or failed one; null for an
    /// accepted import recorded before these counts were kept
    #[schema(required = true)]
    changes: Option<Vec<IndexChanges>>,
}

/// One import with what it changed or its problems.
#[derive(ToSchema)]
pub struct ImportDetail {
    #[serde(flatten)]
    record: ImportRecord,
    /// rejected: the problems its answer listed (at most 1,000, in row order); `[]`
    /// otherwise; null for a refusal recorded before these were kept
    #[schema(required = true)]
    row_errors: Option<Vec<RowErrorSchema>>,
}
