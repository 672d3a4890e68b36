//! The schemas of the back office's admin endpoints (`/api/v1/admin/...`): users, every
//! key, tiers, index settings and the trading calendar, as the answers and bodies of the
//! handlers in `src/routes/admin.rs` and `calendar.rs`.
//!
//! Mirrors of the domain types for the document only: never serialised or read, and
//! checked against the real answers by the OpenAPI tests.

#![allow(dead_code)] // the types only derive schemas

use utoipa::ToSchema;

use crate::openapi::auth::Role;
use crate::openapi::keys::{DayUsage, KeyView};

/// A user as the back office shows it.
#[derive(ToSchema)]
pub struct UserView {
    /// opaque
    id: String,
    username: String,
    role: Role,
    /// `free` or `pro`
    tier: String,
    active: bool,
    /// whether the user's keys may be used
    api_access: bool,
    #[schema(format = DateTime)]
    created_at: String,
}

/// A user in the user list.
#[derive(ToSchema)]
pub struct UserSummary {
    #[serde(flatten)]
    user: UserView,
    /// keys not deleted, expired and disabled ones included
    key_count: i64,
    /// the account's counted calls today (UTC), deleted keys included
    calls_today: i64,
}

/// One page of users.
#[derive(ToSchema)]
pub struct UserPage {
    items: Vec<UserSummary>,
    /// rows matching the filters
    total: i64,
    limit: i64,
    offset: i64,
    /// whether rows follow this page
    has_more: bool,
}

/// One user with their keys and usage.
#[derive(ToSchema)]
pub struct UserDetail {
    #[serde(flatten)]
    user: UserView,
    /// keys not deleted, each with `calls_today`
    keys: Vec<KeyView>,
    /// the account's calls per UTC day over the last 30 days, newest first
    usage: Vec<DayUsage>,
}

/// `POST /api/v1/admin/users`.
#[derive(ToSchema)]
pub struct NewUser {
    /// 3 to 64 characters of letters, digits, `.`, `_`, `@`, `-`; case-sensitive
    #[schema(min_length = 3, max_length = 64, pattern = "^[A-Za-z0-9._@-]{3,64}$")]
    username: String,
    /// 12 to 256 characters
    #[schema(min_length = 12, max_length = 256, format = Password)]
    password: String,
    /// default `user`
    role: Option<Role>,
    /// `free` (the default) or `pro`
    tier: Option<String>,
}

/// `PATCH /api/v1/admin/users/{id}`: absent fields are left alone.
#[derive(ToSchema)]
pub struct UserPatch {
    /// `free` or `pro`
    tier: Option<String>,
    role: Option<Role>,
    active: Option<bool>,
    api_access: Option<bool>,
}

/// The owner of a key.
#[derive(ToSchema)]
pub struct KeyOwner {
    id: String,
    username: String,
}

/// A key in the list of every key.
#[derive(ToSchema)]
pub struct OwnedKeyView {
    #[serde(flatten)]
    key: KeyView,
    owner: KeyOwner,
}

/// One page of keys.
#[derive(ToSchema)]
pub struct KeyPage {
    items: Vec<OwnedKeyView>,
    /// rows matching the filters
    total: i64,
    limit: i64,
    offset: i64,
    /// whether rows follow this page
    has_more: bool,
}

/// `PATCH /api/v1/admin/keys/{id}`: an absent field is left alone, `null` clears a
/// nullable one.
#[derive(ToSchema)]
pub struct KeyPatch {
    /// false disables the key (403 / 40301 on use)
    active: Option<bool>,
    /// the key's own limit a minute; null: the tier's
    per_minute: Option<i32>,
    /// the key's own limit a day; null: the tier's
    per_day: Option<i32>,
    /// `index:read`, `quote:read`, `calendar:read`
    scopes: Option<Vec<String>>,
    /// existing index codes; null: every index of the tier
    #[schema(min_items = 1)]
    index_codes: Option<Vec<String>>,
    /// addresses or CIDR ranges (at most 64); empty: anywhere
    #[schema(max_items = 64)]
    ip_allowlist: Option<Vec<String>>,
    /// RFC 3339 with an offset, in the future; null: never
    #[schema(format = DateTime)]
    expires_at: Option<String>,
}

/// A tier's settings.
#[derive(ToSchema)]
pub struct Tier {
    /// `free` or `pro`
    tier: String,
    /// a key's calls a UTC minute
    per_minute: i64,
    /// a key's calls a UTC day
    per_day: i64,
    /// the most rows a page may hold
    max_rows: u32,
    /// keys an account may hold; null: unlimited
    #[schema(required = true)]
    max_keys: Option<u32>,
    /// open trading days of delay
    delay_days: u32,
    /// whether `member` indexes are included
    member_indexes: bool,
}

/// `PUT /api/v1/admin/tiers/{tier}`: every setting, `max_keys` included (null:
/// unlimited).
#[derive(ToSchema)]
pub struct TierSettings {
    per_minute: i32,
    per_day: i32,
    max_rows: i32,
    #[schema(required = true)]
    max_keys: Option<i32>,
    delay_days: i32,
    member_indexes: bool,
}

/// `PATCH /api/v1/admin/indexes/{index_code}`: absent fields are left alone. Texts are
/// trimmed, must not be blank, and may not start with `=`, `+` or `@` or hold a control
/// character; a bad field is 400 / 40001 naming it.
#[derive(ToSchema)]
pub struct IndexPatch {
    /// `aggregate`, `index_only`, `member` or `private`
    visibility: Option<String>,
    sort_no: Option<i32>,
    /// 1 to 200 characters
    index_name: Option<String>,
    /// what the index measures, 1 to 1,000 characters
    description: Option<String>,
    /// unit of the index points, 1 to 50 characters
    unit: Option<String>,
    /// ISO 4217 code of the index's prices: three capital letters
    #[schema(pattern = "^[A-Z]{3}$", example = "USD")]
    currency: Option<String>,
    /// what a price includes, 1 to 500 characters
    price_basis: Option<String>,
    /// where prices come from, 1 to 500 characters
    source: Option<String>,
    /// `HH:MM` in the service time zone: when a trading day's values are published
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "18:00")]
    publish_time: Option<String>,
    /// the methodology's version, 1 to 50 characters
    methodology_version: Option<String>,
}

/// An index's settings and facts (D20).
#[derive(ToSchema)]
pub struct IndexSettings {
    index_code: String,
    index_name: String,
    sort_no: i32,
    /// `aggregate`, `index_only`, `member` or `private`
    visibility: String,
    description: String,
    unit: String,
    /// ISO 4217 code of the index's prices
    currency: String,
    price_basis: String,
    source: String,
    /// `HH:MM` in the service time zone
    publish_time: String,
    methodology_version: String,
}

/// `PUT /api/v1/admin/calendar`: one of two forms, not both.
#[derive(ToSchema)]
#[serde(untagged)]
pub enum CalendarChange {
    OpenDays(OpenDays),
    Years(CalendarYears),
}

/// The whole calendar: exactly these open days.
#[derive(ToSchema)]
pub struct OpenDays {
    /// 1 to 20000 distinct real dates (`YYYYMMDD`) in 1990-2100
    #[schema(min_items = 1, max_items = 20000)]
    open_days: Vec<String>,
}

/// 1 January `from_year` to 31 December `to_year` rebuilt: every day not on a `weekend`
/// day and not a holiday is open.
#[derive(ToSchema)]
pub struct CalendarYears {
    #[schema(minimum = 1990, maximum = 2100)]
    from_year: i64,
    /// at most 50 years after `from_year`
    #[schema(minimum = 1990, maximum = 2100)]
    to_year: i64,
    /// closed days inside the span (`YYYYMMDD`)
    holidays: Option<Vec<String>>,
    /// closed days of the week (`mon` ... `sun`); default `["sat", "sun"]`
    weekend: Option<Vec<String>>,
}

/// The whole calendar after a change.
#[derive(ToSchema)]
pub struct CalendarSummary {
    /// open days in the whole calendar
    open_days: i64,
    /// the first open day (`YYYYMMDD`); null when the calendar is empty
    #[schema(required = true)]
    first: Option<String>,
    /// the last open day (`YYYYMMDD`); null when the calendar is empty
    #[schema(required = true)]
    last: Option<String>,
}
