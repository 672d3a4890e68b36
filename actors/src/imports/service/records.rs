//! The back office's read side of imports: the list (`GET /api/v1/admin/imports`),
//! its pages, and one import's detail with what it changed or its listed problems.
//!
//! Read only: the rows are written by [`super::recording`]. This must never change an
//! import's record, and never show an import it cannot read whole (a stored value that
//! does not parse is an internal error, not a partial answer).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Importer;
use crate::db::Traced;
use crate::imports::validate::RowError;
use crate::paging::PageRequest;
use crate::quotes::store::IndexChanges;
use crate::{ApiError, ErrorCode};

/// An import as `GET /api/v1/admin/imports` lists it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportRecord {
    pub id: String,
    /// Who imported it; `null` for the command line and the demo data.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub username: Option<String>,
    /// `http`, `command` or `demo`
    pub source: String,
    pub file_name: String,
    /// Data rows read (header excluded); 0 when refused before reading.
    pub rows: i32,
    /// `accepted`, `rejected` or `failed`.
    pub result: String,
    /// Problems found when rejected (all of them, listed or not).
    pub errors: i32,
    pub message: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// When an accepted import's data was published (`as_of` this instant or later
    /// sees it, D17); `null` for one not accepted or accepted before this was kept.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub published_at: Option<DateTime<Utc>>,
    /// Per recalculated index, by code: `[]` for an import that was not accepted (it
    /// changed nothing); `null` for an accepted one recorded before these were kept.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub changes: Option<Vec<IndexChanges>>,
}

/// One import as `GET /api/v1/admin/imports/{id}` shows it: its record (with what it
/// changed) and, when it was rejected, its listed problems.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportDetail {
    #[serde(flatten)]
    pub record: ImportRecord,
    /// The first problems of a refused file (at most 1,000, in row order, as its answer
    /// listed them): `[]` for an accepted import or a refusal not about rows; `null`
    /// for one recorded before these were kept.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub row_errors: Option<Vec<RowError>>,
}

/// The newest imports a list shows when the client does not say.
pub const DEFAULT_LISTED: i64 = 100;
/// The most imports one list shows.
pub const MAX_LISTED: i64 = 500;

/// The columns of [`record_of`], from `imports i` joined as [`RECORD_FROM`] says.
const RECORD_COLUMNS: &str = "i.import_id, u.username, i.source, i.file_name, i.rows, i.result, \
     i.errors, i.message, i.started_at, i.finished_at, v.published_at, \
     (SELECT json_agg(json_build_object('index_code', c.index_code, \
                      'quote_days_added', c.quote_days_added, \
                      'quote_days_replaced', c.quote_days_replaced, \
                      'daily_rows_added', c.daily_rows_added, \
                      'daily_rows_revised', c.daily_rows_revised) ORDER BY c.index_code) \
      FROM import_changes c WHERE c.import_id = i.import_id)::text AS changes";
const RECORD_FROM: &str = "imports i LEFT JOIN users u USING (user_id) \
     LEFT JOIN vintages v ON v.import_id = i.import_id";

fn record_of(row: &tokio_postgres::Row) -> Result<ImportRecord, ApiError> {
    let result: String = row.try_get("result")?;
    let changes = match row.try_get::<_, Option<String>>("changes")? {
        Some(text) => Some(serde_json::from_str(&text).map_err(ApiError::internal)?),
        // Every accepted import changes at least one index (an empty file is refused):
        // none stored means it was recorded before they were.
        None if result == "accepted" => None,
        None => Some(Vec::new()),
    };
    Ok(ImportRecord {
        id: row.try_get::<_, i64>("import_id")?.to_string(),
        username: row.try_get("username")?,
        source: row.try_get("source")?,
        file_name: row.try_get("file_name")?,
        rows: row.try_get("rows")?,
        result: row.try_get("result")?,
        errors: row.try_get("errors")?,
        message: row.try_get("message")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        published_at: row.try_get("published_at")?,
        changes,
    })
}

impl Importer {
    /// The latest `limit` imports (1 to [`MAX_LISTED`]), newest first.
    pub async fn list(&self, limit: i64) -> Result<Vec<ImportRecord>, ApiError> {
        let limit = limit.clamp(1, MAX_LISTED);
        let page = PageRequest::new(Some(limit), None, DEFAULT_LISTED, MAX_LISTED)?;
        self.page(page).await
    }

    /// A page of the imports, newest first (`limit` 1..=500, default 100: see
    /// [`PageRequest::new`] with [`DEFAULT_LISTED`] and [`MAX_LISTED`]).
    pub async fn page(&self, page: PageRequest) -> Result<Vec<ImportRecord>, ApiError> {
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "imports.list",
                &format!(
                    "SELECT {RECORD_COLUMNS} FROM {RECORD_FROM} \
                     ORDER BY i.import_id DESC LIMIT $1 OFFSET $2"
                ),
                &[&page.limit(), &page.offset()],
            )
            .await?;
        rows.iter().map(record_of).collect()
    }

    /// One import with what it changed, or its listed problems; an id that is not one
    /// is 404 like an unknown one.
    pub async fn detail(&self, id: &str) -> Result<ImportDetail, ApiError> {
        let not_found = || ApiError::new(ErrorCode::NotFound, format!("no import with id '{id}'"));
        let import_id: i64 = id.parse().map_err(|_| not_found())?;
        let client = self.pool.get().await?;
        let row = client
            .query_opt_named(
                "imports.find",
                &format!(
                    "SELECT {RECORD_COLUMNS}, i.row_errors::text AS row_errors \
                     FROM {RECORD_FROM} WHERE i.import_id = $1"
                ),
                &[&import_id],
            )
            .await?
            .ok_or_else(not_found)?;
        let record = record_of(&row)?;
        let accepted = record.result == "accepted";
        let row_errors = match row.try_get::<_, Option<String>>("row_errors")? {
            Some(text) => Some(serde_json::from_str(&text).map_err(ApiError::internal)?),
            None if accepted => Some(Vec::new()),
            None => None,
        };
        Ok(ImportDetail { record, row_errors })
    }
}
