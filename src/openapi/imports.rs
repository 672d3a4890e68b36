//! `/api/v1/admin/imports`: quote files in, all or nothing (D8), and the record of every
//! attempt. Administrators and super administrators.

#![allow(dead_code)] // the functions only carry `#[utoipa::path]`; the types only derive schemas

use std::collections::BTreeMap;

use utoipa::ToSchema;

use super::errors::{
    BadRequest, Conflict, Forbidden, ImportRejected, InternalError, NotFound, RowErrorSchema,
    Unauthorized,
};
use super::params::ImportListParams;

/// Import a quote file
///
/// A `.xlsx` workbook (its first sheet) or a `.csv` file with the header `trade_date,
/// index_code, specification, weight, price` (any order and letter case). If any row
/// breaks a rule nothing is stored: 422 / 40002 lists the first 1,000 problems in
/// `errors`, with their total in `errors_total`. An accepted file replaces the quotes of
/// each (date, index) it holds and recalculates the indexes from the earliest affected
/// date, in one transaction. One import runs at a time (409 / 40901 meanwhile). A file
/// that is not `.xlsx`/`.csv`, cannot be read, or passes `IMPORT_MAX_MB` or the size
/// bounds is 400 / 40001. Every attempt is recorded.
#[utoipa::path(
    post,
    path = "/api/v1/admin/imports",
    tag = "imports",
    operation_id = "import_quotes",
    request_body(content = ImportUpload, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The file was accepted.", body = ImportOutcome),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 422, response = ImportRejected),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("admin"))),
)]
fn import_quotes() {}

/// List imports
///
/// Every attempt, newest first. `data` is the list itself, not a page object: ask for
/// the next page while a page comes back full.
#[utoipa::path(
    get,
    path = "/api/v1/admin/imports",
    tag = "imports",
    operation_id = "list_imports",
    params(ImportListParams),
    responses(
        (status = 200, description = "The imports.", body = Vec<ImportRecord>),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("admin"))),
)]
fn list_imports() {}

/// One import
///
/// Its record, what it changed per index (accepted) or its listed problems (rejected).
#[utoipa::path(
    get,
    path = "/api/v1/admin/imports/{id}",
    tag = "imports",
    operation_id = "import_detail",
    params(("id" = String, Path, description = "the import's id")),
    responses(
        (status = 200, description = "The import.", body = ImportDetail),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("admin"))),
)]
fn import_detail() {}

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
