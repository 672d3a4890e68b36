//! The administrators' side of keys (D7): every live key with its owner, one key by id,
//! and a change of any key's settings (state, limits, scopes, index range, allow-list,
//! expiry).
//!
//! It never creates a key or touches its secret: that is the owner's ([`super::owned`]).
//! A deleted key is "not found" here too.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::rules::{check_allowlist, check_expiry, check_index_codes, check_limit, check_scopes};
use super::view::{no_key, owned_columns, owned_view, view, KeyView, OwnedKeyView, VIEW_COLUMNS};
use crate::db::Traced;
use crate::paging::{Page, PageRequest, SearchText};
use crate::quota::Window;
use crate::ApiError;

/// `PATCH /api/v1/admin/keys/{id}`: an absent field is left alone, `null` clears a
/// nullable one.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct KeyPatch {
    /// false disables the key (403 / 40301 on use)
    pub active: Option<bool>,
    /// the key's own limit a minute; null: the tier's
    #[serde(default, deserialize_with = "crate::accounts::present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i32>))]
    pub per_minute: Option<Option<i32>>,
    /// the key's own limit a day; null: the tier's
    #[serde(default, deserialize_with = "crate::accounts::present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i32>))]
    pub per_day: Option<Option<i32>>,
    /// `index:read`, `quote:read`, `calendar:read`
    pub scopes: Option<Vec<String>>,
    /// existing index codes; null: every index of the tier
    #[serde(default, deserialize_with = "crate::accounts::present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<String>>, min_items = 1))]
    pub index_codes: Option<Option<Vec<String>>>,
    /// addresses or CIDR ranges (at most 64); empty: anywhere
    #[cfg_attr(feature = "openapi", schema(max_items = 64))]
    pub ip_allowlist: Option<Vec<String>>,
    /// RFC 3339 with an offset, in the future; null: never
    #[serde(default, deserialize_with = "crate::wire_date::timestamp::present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<DateTime<Utc>>))]
    pub expires_at: Option<Option<DateTime<Utc>>>,
}

/// Every live key, or those of one owner (`user_id`, an opaque id: one that is no id
/// matches nothing) and those whose name contains `q` (any letter case), newest first.
pub async fn list_all(
    client: &impl Traced,
    page: PageRequest,
    user_id: Option<&str>,
    q: &SearchText,
    now: DateTime<Utc>,
) -> Result<Page<OwnedKeyView>, ApiError> {
    let owner: Option<i64> = match user_id {
        None => None,
        Some(id) => match id.parse() {
            Ok(id) => Some(id),
            Err(_) => return Ok(page.page(Vec::new(), 0)),
        },
    };
    let pattern = q.like_pattern();
    let filter = "deleted_at IS NULL AND ($1::bigint IS NULL OR user_id = $1) \
                  AND ($2::text IS NULL OR name ILIKE $2 ESCAPE '\\')";
    let total: i64 = client
        .query_value_named(
            "keys.count_all",
            &format!("SELECT count(*) FROM api_keys WHERE {filter}"),
            &[&owner, &pattern],
        )
        .await?;
    let rows = client
        .query_named(
            "keys.page",
            &format!(
                "SELECT {} FROM api_keys WHERE {filter} \
                 ORDER BY created_at DESC, key_id LIMIT $4 OFFSET $5",
                owned_columns("$3")
            ),
            &[
                &owner,
                &pattern,
                &Window::Day.start(now),
                &page.limit(),
                &page.offset(),
            ],
        )
        .await?;
    page.page_of(&rows, total, |row| owned_view(row, now))
}

/// The live key `key_id` with its owner and today's calls, as the administrators' list
/// shows it; `None` when there is no such key or it was deleted.
pub async fn find_by_id(
    client: &impl Traced,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<OwnedKeyView>, ApiError> {
    client
        .query_opt_named(
            "keys.find_by_id",
            &format!(
                "SELECT {} FROM api_keys WHERE key_id = $1 AND deleted_at IS NULL",
                owned_columns("$2")
            ),
            &[&key_id, &Window::Day.start(now)],
        )
        .await?
        .map(|row| owned_view(&row, now))
        .transpose()
}

/// An administrator's change to any (not deleted) key.
pub async fn patch(
    client: &impl Traced,
    key_id: &str,
    patch: KeyPatch,
    now: DateTime<Utc>,
) -> Result<KeyView, ApiError> {
    if let Some(Some(at)) = patch.expires_at {
        check_expiry(at, now)?;
    }
    check_limit("per_minute", patch.per_minute.flatten())?;
    check_limit("per_day", patch.per_day.flatten())?;
    let scopes = patch.scopes.map(check_scopes).transpose()?;
    let allowlist = patch.ip_allowlist.map(check_allowlist).transpose()?;
    let index_codes = match patch.index_codes {
        Some(Some(codes)) => Some(Some(check_index_codes(client, codes).await?)),
        other => other,
    };
    // `$n IS NULL` keeps a column; the `set_*` flags say whether a nullable one is set.
    let row = client
        .query_opt_named(
            "keys.update",
            &format!(
                "UPDATE api_keys SET \
                   active = COALESCE($2, active), \
                   per_minute = CASE WHEN $3 THEN $4 ELSE per_minute END, \
                   per_day = CASE WHEN $5 THEN $6 ELSE per_day END, \
                   scopes = COALESCE($7, scopes), \
                   index_codes = CASE WHEN $8 THEN $9 ELSE index_codes END, \
                   ip_allowlist = COALESCE($10::text[]::cidr[], ip_allowlist), \
                   expires_at = CASE WHEN $11 THEN $12 ELSE expires_at END \
                 WHERE key_id = $1 AND deleted_at IS NULL RETURNING {VIEW_COLUMNS}"
            ),
            &[
                &key_id,
                &patch.active,
                &patch.per_minute.is_some(),
                &patch.per_minute.flatten(),
                &patch.per_day.is_some(),
                &patch.per_day.flatten(),
                &scopes,
                &index_codes.is_some(),
                &index_codes.flatten(),
                &allowlist,
                &patch.expires_at.is_some(),
                &patch.expires_at.flatten(),
            ],
        )
        .await?
        .ok_or_else(|| no_key(key_id))?;
    view(&row, now)
}
