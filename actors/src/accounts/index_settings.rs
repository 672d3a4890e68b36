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
