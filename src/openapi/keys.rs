//! The schemas of `/api/v1/keys` (handled in `src/routes/keys.rs`): a signed-in user's
//! own API keys (D7). Someone else's key, an unknown
//! one and a deleted one are all 404 / 40401, never 403, so ids cannot be probed.

#![allow(dead_code)] // mirrors: the types only derive schemas, for the handlers' `#[utoipa::path]`

use utoipa::ToSchema;

/// `POST /api/v1/keys`.
#[derive(ToSchema)]
pub struct NewKey {
    /// 1 to 100 characters without control characters, once spaces around it are dropped
    #[schema(min_length = 1, max_length = 100)]
    name: String,
    /// existing index codes the key may read; null or absent: every index of the tier;
    /// an empty list is refused
    #[schema(min_items = 1)]
    index_codes: Option<Vec<String>>,
    /// addresses or CIDR ranges the key may be used from (at most 64; professional members
    /// only); empty, null or absent: anywhere
    #[schema(max_items = 64)]
    ip_allowlist: Option<Vec<String>>,
    /// when the key stops working: RFC 3339 with an offset, in the future
    #[schema(format = DateTime)]
    expires_at: Option<String>,
}

/// `PATCH /api/v1/keys/{id}`: only the name.
#[derive(ToSchema)]
pub struct KeyRename {
    /// 1 to 100 characters without control characters, once spaces around it are dropped
    #[schema(min_length = 1, max_length = 100)]
    name: String,
}

/// Key metadata: never the key itself.
#[derive(ToSchema)]
pub struct KeyView {
    /// opaque
    id: String,
    name: String,
    /// the first 9 characters of the key, to tell keys apart
    key_hint: String,
    #[schema(inline)]
    state: KeyState,
    /// what the key may read: `index:read`, `quote:read`, `calendar:read`
    scopes: Vec<String>,
    /// null: every index the owner's tier covers
    #[schema(required = true)]
    index_codes: Option<Vec<String>>,
    /// addresses or CIDR ranges the key may be used from; empty: anywhere
    ip_allowlist: Vec<String>,
    /// the key's own limit a minute; null: the tier's
    #[schema(required = true)]
    per_minute: Option<i32>,
    /// the key's own limit a day; null: the tier's
    #[schema(required = true)]
    per_day: Option<i32>,
    #[schema(required = true, format = DateTime)]
    expires_at: Option<String>,
    #[schema(format = DateTime)]
    created_at: String,
    /// calls counted today (UTC), as last written; in lists only
    calls_today: Option<i64>,
}

#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum KeyState {
    Active,
    Disabled,
    Expired,
}

/// A created (or rotated) key: its metadata and, this once, the key.
#[derive(ToSchema)]
pub struct CreatedKey {
    #[serde(flatten)]
    view: KeyView,
    /// the key: `iq_` and 40 characters; shown this once
    #[schema(pattern = "^iq_[0-9A-Za-z]{40}$")]
    key: String,
}

/// A key's calls per UTC day and the limits in force.
#[derive(ToSchema)]
pub struct KeyUsage {
    key_id: String,
    /// the owner's user id
    owner: String,
    /// the owner's tier
    tier: String,
    /// the limit a minute in force now: the smaller of the key's and the tier's
    per_minute: i64,
    /// the limit a day in force now
    per_day: i64,
    /// newest first, one entry per day
    days: Vec<DayUsage>,
    account: AccountUsage,
}

/// The owner's account over the same days (D11).
#[derive(ToSchema)]
pub struct AccountUsage {
    /// the account's cap a minute; null when the tier has unlimited keys
    #[schema(required = true)]
    per_minute: Option<i64>,
    /// the account's cap a day; null when the tier has unlimited keys
    #[schema(required = true)]
    per_day: Option<i64>,
    /// all the account's keys, deleted ones included; newest first
    days: Vec<DayUsage>,
}

/// Counted calls on one UTC day.
#[derive(ToSchema)]
pub struct DayUsage {
    /// `YYYYMMDD`, UTC
    #[schema(pattern = "^[0-9]{8}$")]
    date: String,
    calls: i64,
}
