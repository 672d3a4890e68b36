//! The schemas of `GET /api/v1/config` and `GET /api/v1/membership` (handled in
//! `src/routes/config.rs`, `membership.rs`): what a client reads before and
//! after login (D9, D14).

#![allow(dead_code)] // mirrors: the types only derive schemas, for the handlers' `#[utoipa::path]`

use utoipa::ToSchema;

use super::auth::Account;
use super::query::DatasetName;

/// Site configuration before login.
#[derive(ToSchema)]
pub struct SiteConfig {
    /// `SITE_NAME`
    site_name: String,
    /// whether the first super administrator exists (`POST /api/v1/setup` is closed)
    initialized: bool,
    /// `v1`
    api_version: String,
    /// the datasets of `POST /api/v1/query`
    datasets: Vec<DatasetName>,
    /// the server's cap on `limit` (`MAX_LIMIT`)
    #[schema(minimum = 1, maximum = 5000)]
    max_limit: u32,
    login: LoginPolicy,
}

#[derive(ToSchema)]
pub struct LoginPolicy {
    /// failed logins for one user name a calendar minute before logins for it answer 429
    max_failures_per_minute: u32,
}

/// Who is asking and what they may see.
#[derive(ToSchema)]
pub struct Membership {
    /// `visitor`, `session` or `key`
    #[schema(inline)]
    identity: Identity,
    /// the signed-in user, or with a key the key's owner; null for a visitor
    #[schema(required = true)]
    user: Option<Account>,
    /// the tier: `free` or `pro`
    tier: String,
    /// the tier's delay in open trading days
    delay_days: u32,
    /// the latest date whose rows this caller sees (`YYYYMMDD`); null when the calendar
    /// has no open day old enough
    #[schema(required = true, pattern = "^[0-9]{8}$")]
    data_cutoff: Option<String>,
    /// the index codes this caller sees, in display order
    indexes: Vec<String>,
    /// the key asked about; only with a key
    key: Option<KeyMembership>,
    quota: MembershipQuota,
    /// the per-minute protection of callers without a key; only without a key
    protection: Option<KeylessProtection>,
}

#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum Identity {
    Visitor,
    Session,
    Key,
}

/// The key a membership was asked with.
#[derive(ToSchema)]
pub struct KeyMembership {
    id: String,
    name: String,
    /// what the key may read
    scopes: Vec<String>,
    /// null: every index the tier covers
    #[schema(required = true)]
    index_codes: Option<Vec<String>>,
    #[schema(required = true, format = DateTime)]
    expires_at: Option<String>,
}

/// For a key, its effective limits (the tightest of the key's own, its tier's and its
/// account's) and today's use; for a website identity, the tier's key quota.
#[derive(ToSchema)]
pub struct MembershipQuota {
    per_minute: i64,
    per_day: i64,
    /// keys an account of the tier may hold; null: unlimited
    #[schema(required = true)]
    max_keys: Option<u32>,
    /// the most rows a page may hold (the tier's, capped by the server's)
    max_rows: u32,
    /// with a key: calls counted this UTC minute
    used_minute: Option<i64>,
    /// with a key: calls counted this UTC day
    used_day: Option<i64>,
    /// with a key: calls left this minute
    remaining_minute: Option<i64>,
    /// with a key: calls left today
    remaining_day: Option<i64>,
}

/// The protection of callers without a key.
#[derive(ToSchema)]
pub struct KeylessProtection {
    /// queries and pages a minute (`WEBSITE_PER_MINUTE`; 0: no limit)
    per_minute: u32,
}
