//! What owners and administrators are shown of a key: its metadata, its calls today,
//! its owner, and once, at creation or rotation, the key itself.
//!
//! It must never show the key's hash, and never the key outside a [`CreatedKey`].

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{ApiError, ErrorCode};

/// Key metadata as owners and administrators see it: never the key itself.
#[derive(Debug, Serialize)]
pub struct KeyView {
    pub id: String,
    pub name: String,
    /// The first characters of the key, to tell keys apart.
    pub key_hint: String,
    /// `active`, `disabled` or `expired`.
    pub state: &'static str,
    pub scopes: Vec<String>,
    /// `null`: every index the owner's tier covers.
    pub index_codes: Option<Vec<String>>,
    pub ip_allowlist: Vec<String>,
    /// The key's own limits; `null`: the tier's.
    pub per_minute: Option<i32>,
    pub per_day: Option<i32>,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// Calls counted today (UTC) as flushed; in key lists and the administrators' view of
    /// one key, not in the answer to a change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls_today: Option<i64>,
}

/// A created key: its metadata and, once, the key. `Debug` leaves the key out.
#[derive(Serialize)]
pub struct CreatedKey {
    #[serde(flatten)]
    pub view: KeyView,
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
pub struct KeyOwner {
    /// The owner's user id (opaque, D7).
    pub id: String,
    pub username: String,
}

/// A key in the administrators' list: its metadata (with `calls_today`) and its owner.
#[derive(Debug, Serialize)]
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
