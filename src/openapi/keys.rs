//! `/api/v1/keys`: a signed-in user's own API keys (D7). Someone else's key, an unknown
//! one and a deleted one are all 404 / 40401, never 403, so ids cannot be probed.

#![allow(dead_code)] // the functions only carry `#[utoipa::path]`; the types only derive schemas

use utoipa::ToSchema;

use super::errors::{BadRequest, Conflict, Forbidden, InternalError, NotFound, Unauthorized};
use super::params::DaysParam;

/// List my keys
///
/// The caller's keys that are not deleted (never the key itself), each with today's
/// counted calls.
#[utoipa::path(
    get,
    path = "/api/v1/keys",
    tag = "keys",
    operation_id = "list_own_keys",
    responses(
        (status = 200, description = "The keys.", body = Vec<KeyView>),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
)]
fn list_own_keys() {}

/// Create a key
///
/// A new key with every scope. The full key is in this answer and nowhere else: store
/// it. IP allow-lists are for professional members (403 / 40301 on the free tier); a
/// tier's `max_keys` reached is 409 / 40901; API access switched off is 403 / 40301.
#[utoipa::path(
    post,
    path = "/api/v1/keys",
    tag = "keys",
    operation_id = "create_key",
    request_body(content = NewKey, content_type = "application/json"),
    responses(
        (
            status = 200,
            description = "The key's metadata and, once, the key.",
            body = CreatedKey,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the key")),
        ),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
)]
fn create_key() {}

/// Delete a key
///
/// The key is refused at once (401 / 40102); its calls of the day still count against the
/// account. No body.
#[utoipa::path(
    delete,
    path = "/api/v1/keys/{id}",
    tag = "keys",
    operation_id = "delete_key",
    params(("id" = String, Path, description = "the key's id")),
    responses(
        (status = 200, description = "The key is deleted.", body = Deleted),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
)]
fn delete_key() {}

/// Rename a key
///
/// Only `name` is accepted: spaces around it are dropped, then it must be 1 to 100
/// characters without control characters.
#[utoipa::path(
    patch,
    path = "/api/v1/keys/{id}",
    tag = "keys",
    operation_id = "rename_key",
    params(("id" = String, Path, description = "the key's id")),
    request_body(content = KeyRename, content_type = "application/json"),
    responses(
        (status = 200, description = "The key's metadata.", body = KeyView),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
)]
fn rename_key() {}

/// Give a key a new secret
///
/// The key keeps its id, settings, state, usage and quota; only the secret and
/// `key_hint` change. The old secret is refused from this answer on (within a second on
/// other instances). The new key is in this answer and nowhere else. No body.
#[utoipa::path(
    post,
    path = "/api/v1/keys/{id}/rotate",
    tag = "keys",
    operation_id = "rotate_key",
    params(("id" = String, Path, description = "the key's id")),
    responses(
        (
            status = 200,
            description = "The key's metadata and, once, its new key.",
            body = CreatedKey,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the key")),
        ),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
)]
fn rotate_key() {}

/// Usage of my key
///
/// The key's counted calls per UTC day, newest first (days without calls as 0), its
/// limits in force, and its owner's account over the same days. Written by the instances
/// every `QUOTA_FLUSH_MS`, so it may lag the calls by that much.
#[utoipa::path(
    get,
    path = "/api/v1/keys/{id}/usage",
    tag = "keys",
    operation_id = "own_key_usage",
    params(("id" = String, Path, description = "the key's id"), DaysParam),
    responses(
        (status = 200, description = "The key's usage.", body = KeyUsage),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
)]
fn own_key_usage() {}

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

#[derive(ToSchema)]
pub struct Deleted {
    /// the deleted key's id
    deleted: String,
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
