//! What owners and administrators are shown of a key: its metadata, its calls today,
//! its owner, and once, at creation or rotation, the key itself.
//!
//! It must never show the key's hash, and never the key outside a [`CreatedKey`].

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{ApiError, ErrorCode};

/// Key metadata: never the key itself.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyView {
    /// opaque
    pub id: String,
    pub name: String,
    /// the first 9 characters of the key, to tell keys apart
    pub key_hint: String,
    #[cfg_attr(feature = "openapi", schema(value_type = KeyState, inline))]
    pub state: &'static str,
    /// what the key may read: `index:read`, `quote:read`, `calendar:read`
    pub scopes: Vec<String>,
    /// null: every index the owner's tier covers
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub index_codes: Option<Vec<String>>,
    /// addresses or CIDR ranges the key may be used from; empty: anywhere
    pub ip_allowlist: Vec<String>,
    /// the key's own limit a minute; null: the tier's
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub per_minute: Option<i32>,
    /// the key's own limit a day; null: the tier's
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub per_day: Option<i32>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// calls counted today (UTC), as last written; in lists only
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls_today: Option<i64>,
}

// What `KeyView::state` says, for the schema: `active`, `disabled` or `expired`.
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum KeyState {
    Active,
    Disabled,
    Expired,
}

/// A created (or rotated) key: its metadata and, this once, the key.
// `Debug` leaves the key out.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedKey {
    #[serde(flatten)]
    pub view: KeyView,
    /// the key: `iq_` and 40 characters; shown this once
    #[cfg_attr(feature = "openapi", schema(pattern = "^iq_[0-9A-Za-z]{40}$"))]
    pub key: String,
}

impl std::fmt::Debug for CreatedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedKey")
            .field("view", &self.view)
            .field("key", &"<redacted>")
            .finish()
    }
}

/// The columns [`view`] reads.
pub(super) const VIEW_COLUMNS: &str =
    "key_id, name, key_hint, active, expires_at, scopes, index_codes, \
     ip_allowlist::text[] AS ip_allowlist, per_minute, per_day, created_at";

/// A column `calls_today`: the key's calls in the day window starting at `window` (the
/// statement's parameter holding the start of today's window), as flushed.
pub(super) fn calls_today(window: &str) -> String {
    format!(
        "(SELECT q.used FROM quota_windows q WHERE q.key_id = api_keys.key_id \
         AND q.span = 'day' AND q.window_start = {window}) AS calls_today"
    )
}

/// The columns [`owned_view`] reads: [`VIEW_COLUMNS`], the owner, and
/// [`calls_today`] of `window`.
pub(super) fn owned_columns(window: &str) -> String {
    format!(
        "{VIEW_COLUMNS}, user_id, \
         (SELECT u.username FROM users u WHERE u.user_id = api_keys.user_id) AS owner_username, \
         {}",
        calls_today(window)
    )
}

pub(super) fn view(row: &tokio_postgres::Row, now: DateTime<Utc>) -> Result<KeyView, ApiError> {
    let active: bool = row.try_get("active")?;
    let expires_at: Option<DateTime<Utc>> = row.try_get("expires_at")?;
    let state = if expires_at.is_some_and(|at| at <= now) {
        "expired"
    } else if active {
        "active"
    } else {
        "disabled"
    };
    Ok(KeyView {
        id: row.try_get("key_id")?,
        name: row.try_get("name")?,
        key_hint: row.try_get("key_hint")?,
        state,
        expires_at,
        scopes: row.try_get("scopes")?,
        index_codes: row.try_get("index_codes")?,
        ip_allowlist: row.try_get("ip_allowlist")?,
        per_minute: row.try_get("per_minute")?,
        per_day: row.try_get("per_day")?,
        created_at: row.try_get("created_at")?,
        calls_today: None,
    })
}

/// [`view`] with the `calls_today` column (0 when the key made no calls today).
pub(super) fn view_with_calls(
    row: &tokio_postgres::Row,
    now: DateTime<Utc>,
) -> Result<KeyView, ApiError> {
    let mut view = view(row, now)?;
    view.calls_today = Some(row.try_get::<_, Option<i64>>("calls_today")?.unwrap_or(0));
    Ok(view)
}

/// Whose a key is, as the administrators' key list shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyOwner {
    /// The owner's user id (opaque, D7).
    pub id: String,
    pub username: String,
}

/// A key in the administrators' list: its metadata (with `calls_today`) and its owner.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnedKeyView {
    #[serde(flatten)]
    pub key: KeyView,
    pub owner: KeyOwner,
}

/// A row of [`owned_columns`].
pub(super) fn owned_view(
    row: &tokio_postgres::Row,
    now: DateTime<Utc>,
) -> Result<OwnedKeyView, ApiError> {
    Ok(OwnedKeyView {
        key: view_with_calls(row, now)?,
        owner: KeyOwner {
            id: row.try_get::<_, i64>("user_id")?.to_string(),
            username: row.try_get("owner_username")?,
        },
    })
}

/// The answer for a key that is not there, or not the caller's: the same either way, so
/// ids cannot be probed.
pub(super) fn no_key(id: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no key with id '{id}'"))
}
