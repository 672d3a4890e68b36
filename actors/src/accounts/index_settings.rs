//! Index settings a super administrator may change (D7): display name, sort order and
//! visibility (the back-office public level).

use serde::{Deserialize, Serialize};

use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// `PATCH /api/v1/admin/indexes/{index_code}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexPatch {
    pub visibility: Option<String>,
    pub sort_no: Option<i32>,
    pub index_name: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct IndexSettings {
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
) -> Result<IndexSettings, ApiError> {
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
    Ok(IndexSettings {
        index_code: row.try_get("index_code")?,
        index_name: row.try_get("index_name")?,
        sort_no: row.try_get("sort_no")?,
        visibility: row.try_get("visibility")?,
    })
}

/// Every index (private ones included) in display order.
pub async fn list(client: &impl Traced) -> Result<Vec<IndexSettings>, ApiError> {
    let rows = client
        .query_named(
            "index_settings.list",
            "SELECT index_code, index_name, sort_no, visibility FROM indexes \
             ORDER BY sort_no, index_code",
            &[],
        )
        .await?;
    rows.iter()
        .map(|row| {
            Ok(IndexSettings {
                index_code: row.try_get("index_code")?,
                index_name: row.try_get("index_name")?,
                sort_no: row.try_get("sort_no")?,
                visibility: row.try_get("visibility")?,
            })
        })
        .collect()
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
