//! Index settings a super administrator may change (D7): display name, sort order and
//! visibility (the back-office public level), through the [`IndexSettings`] service.
//!
//! It owns these three columns of the `indexes` table and nothing else: it never adds or
//! removes an index, and never touches quotes or daily rows. Every change goes through
//! [`ChangeBus::write`] with `Change::Data`, so every instance drops its index registry
//! and cached pages.

use deadpool_postgres::Pool;
use serde::{Deserialize, Serialize};

use crate::changes::{Change, ChangeBus};
use crate::db::Traced;
use crate::safe_text::text_problem;
use crate::{ApiError, ErrorCode};

/// The index settings as the back office reads and changes them, held in the service's
/// state.
#[derive(Clone)]
pub struct IndexSettings {
    pool: Pool,
    bus: ChangeBus,
}

impl IndexSettings {
    pub fn new(pool: Pool, bus: ChangeBus) -> Self {
        IndexSettings { pool, bus }
    }

    /// Every index with its settings, private ones included, in display order.
    pub async fn list(&self) -> Result<Vec<IndexView>, ApiError> {
        let client = self.pool.get().await?;
        list(&**client).await
    }

    /// `PATCH /api/v1/admin/indexes/{index_code}`: the fields sent, changed.
    pub async fn patch(&self, index_code: &str, patch: IndexPatch) -> Result<IndexView, ApiError> {
        self.bus
            .write(&self.pool, Change::Data, async |tx| {
                self::patch(tx, index_code, patch).await
            })
            .await
    }

    /// Moves an index one place up or down in the display order.
    pub async fn shift(&self, index_code: &str, up: bool) -> Result<(), ApiError> {
        self.bus
            .write(&self.pool, Change::Data, async |tx| {
                shift(tx, index_code, up).await
            })
            .await
    }
}

/// `PATCH /api/v1/admin/indexes/{index_code}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexPatch {
    pub visibility: Option<String>,
    pub sort_no: Option<i32>,
    pub index_name: Option<String>,
}

/// One index's settings, as the back office shows them.
#[derive(Debug, Serialize)]
pub struct IndexView {
    pub index_code: String,
    pub index_name: String,
    pub sort_no: i32,
    pub visibility: String,
}

const VISIBILITIES: [&str; 4] = ["aggregate", "index_only", "member", "private"];

pub async fn patch(
    client: &impl Traced,
    index_code: &str,
    patch: IndexPatch,
) -> Result<IndexView, ApiError> {
    if let Some(v) = &patch.visibility {
        if !VISIBILITIES.contains(&v.as_str()) {
            return Err(ApiError::invalid(
                "field 'visibility' must be one of aggregate, index_only, member, private",
            ));
        }
    }
    if let Some(name) = &patch.index_name {
        if name.trim().is_empty() || name.chars().count() > 200 {
            return Err(ApiError::invalid(
                "field 'index_name' must be 1 to 200 characters",
            ));
        }
        // Names are served as stored, into CSV answers and DataFrames too.
        if let Some(problem) = text_problem(name) {
            return Err(ApiError::invalid(format!("field 'index_name' {problem}")));
        }
    }
    let row = client
        .query_opt_named(
            "index_settings.update",
            "UPDATE indexes SET visibility = COALESCE($2, visibility), \
             sort_no = COALESCE($3, sort_no), index_name = COALESCE($4, index_name), \
             updated_at = now() WHERE index_code = $1 \
             RETURNING index_code, index_name, sort_no, visibility",
            &[
                &index_code,
                &patch.visibility,
                &patch.sort_no,
                &patch.index_name.as_deref().map(str::trim),
            ],
        )
        .await?
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("no index named '{index_code}'"),
            )
        })?;
    from_row(&row)
}

fn from_row(row: &tokio_postgres::Row) -> Result<IndexView, ApiError> {
    Ok(IndexView {
        index_code: row.try_get("index_code")?,
        index_name: row.try_get("index_name")?,
        sort_no: row.try_get("sort_no")?,
        visibility: row.try_get("visibility")?,
    })
}

/// Every index (private ones included) in display order.
pub async fn list(client: &impl Traced) -> Result<Vec<IndexView>, ApiError> {
    let rows = client
        .query_named(
            "index_settings.list",
            "SELECT index_code, index_name, sort_no, visibility FROM indexes \
             ORDER BY sort_no, index_code",
            &[],
        )
        .await?;
    rows.iter().map(from_row).collect()
}

/// Moves `index_code` one place up (earlier) or down in the display order: the order
/// is renumbered 10, 20, 30... with the two neighbours swapped, so indexes that shared
/// a number get distinct ones. Moving past either end changes nothing.
pub async fn shift(client: &impl Traced, index_code: &str, up: bool) -> Result<(), ApiError> {
    let mut order: Vec<String> = list(client)
        .await?
        .into_iter()
        .map(|i| i.index_code)
        .collect();
    let at = order
        .iter()
        .position(|c| c == index_code)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no index '{index_code}'")))?;
    let other = if up { at.checked_sub(1) } else { Some(at + 1) };
    match other {
        Some(other) if other < order.len() => order.swap(at, other),
        _ => return Ok(()),
    }
    let numbers: Vec<i32> = (1..=order.len() as i32).map(|n| n * 10).collect();
    client
        .execute_named(
            "index_settings.renumber",
            "UPDATE indexes i SET sort_no = o.sort_no, updated_at = now() \
             FROM unnest($1::text[], $2::int[]) AS o(index_code, sort_no) \
             WHERE i.index_code = o.index_code AND i.sort_no <> o.sort_no",
            &[&order, &numbers],
        )
        .await?;
    Ok(())
}
