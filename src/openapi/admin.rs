//! `/api/v1/admin/...`: users, every key, tiers, index settings and the trading calendar
//! (D7). Super administrators only, except the calendar and key usage, which any
//! administrator may use. Changes need the session's CSRF token.

#![allow(dead_code)] // the functions only carry `#[utoipa::path]`; the types only derive schemas

use utoipa::ToSchema;

use super::auth::Role;
use super::errors::{BadRequest, Conflict, Forbidden, InternalError, NotFound, Unauthorized};
use super::keys::{DayUsage, KeyUsage, KeyView};
use super::params::{DaysParam, KeyListParams, UserListParams};

/// List users
///
/// Users by user name in code-point order (upper case before lower case), each with
/// their live key count and the account's counted calls today.
#[utoipa::path(
    get,
    path = "/api/v1/admin/users",
    tag = "admin",
    operation_id = "list_users",
    params(UserListParams),
    responses(
        (status = 200, description = "One page of users.", body = UserPage),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn list_users() {}

/// Create a user
///
/// A user name taken already is 409 / 40901.
#[utoipa::path(
    post,
    path = "/api/v1/admin/users",
    tag = "admin",
    operation_id = "create_user",
    request_body(content = NewUser, content_type = "application/json"),
    responses(
        (status = 200, description = "The user.", body = UserView),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn create_user() {}

/// One user
///
/// The user, their keys that are not deleted (each with today's calls) and the
/// account's calls per UTC day over the last 30 days, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/admin/users/{id}",
    tag = "admin",
    operation_id = "user_detail",
    params(("id" = String, Path, description = "the user's id")),
    responses(
        (status = 200, description = "The user.", body = UserDetail),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn user_detail() {}

/// Change a user
///
/// Tier, role, active, API access; absent fields are left alone. The last active super
/// administrator cannot lose the role or be deactivated (409 / 40901).
#[utoipa::path(
    patch,
    path = "/api/v1/admin/users/{id}",
    tag = "admin",
    operation_id = "patch_user",
    params(("id" = String, Path, description = "the user's id")),
    request_body(content = UserPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The user.", body = UserView),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn patch_user() {}

/// List tiers
///
/// Both tiers' settings.
#[utoipa::path(
    get,
    path = "/api/v1/admin/tiers",
    tag = "admin",
    operation_id = "list_tiers",
    responses(
        (status = 200, description = "The tiers.", body = Vec<Tier>),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn list_tiers() {}

/// Replace a tier's settings
///
/// Every setting is required. A change applies from the next call on every instance.
#[utoipa::path(
    put,
    path = "/api/v1/admin/tiers/{tier}",
    tag = "admin",
    operation_id = "replace_tier",
    params(("tier" = String, Path, description = "`free` or `pro`; another name is 404")),
    request_body(content = TierSettings, content_type = "application/json"),
    responses(
        (status = 200, description = "The tier.", body = Tier),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn replace_tier() {}

/// List every key
///
/// Every key that is not deleted, newest first, with its owner and today's calls.
#[utoipa::path(
    get,
    path = "/api/v1/admin/keys",
    tag = "admin",
    operation_id = "list_all_keys",
    params(KeyListParams),
    responses(
        (status = 200, description = "One page of keys.", body = KeyPage),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = InternalError),
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn list_all_keys() {}

/// Change any key
///
/// An absent field is left alone; `null` clears a nullable setting (back to the tier's
/// limits, every index, no expiry).
#[utoipa::path(
    patch,
    path = "/api/v1/admin/keys/{id}",
    tag = "admin",
    operation_id = "patch_key",
    params(("id" = String, Path, description = "the key's id")),
    request_body(content = KeyPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The key's metadata.", body = KeyView),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn patch_key() {}

/// Usage of any key
///
/// As the owner's own usage endpoint answers it; deleted keys too.
#[utoipa::path(
    get,
    path = "/api/v1/admin/keys/{id}/usage",
    tag = "admin",
    operation_id = "key_usage",
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
    extensions(("x-role" = json!("admin"))),
)]
fn key_usage() {}

/// Set the trading calendar
///
/// Either the whole calendar as a list of open days, or years rebuilt from a weekend
/// rule and holidays (days outside them are kept). A change that would close a day
/// holding quotes or index rows is 409 / 40901 naming the days.
#[utoipa::path(
    put,
    path = "/api/v1/admin/calendar",
    tag = "admin",
    operation_id = "replace_calendar",
    request_body(content = CalendarChange, content_type = "application/json"),
    responses(
        (status = 200, description = "The whole calendar after the change.", body = CalendarSummary),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("admin"))),
)]
fn replace_calendar() {}

/// Change an index's settings
///
/// Visibility, display order and name; absent fields are left alone.
#[utoipa::path(
    patch,
    path = "/api/v1/admin/indexes/{index_code}",
    tag = "admin",
    operation_id = "patch_index",
    params(("index_code" = String, Path, description = "the index code (case-sensitive)")),
    request_body(content = IndexPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The index's settings.", body = IndexSettings),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
fn patch_index() {}

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

/// `PATCH /api/v1/admin/indexes/{index_code}`: absent fields are left alone.
#[derive(ToSchema)]
pub struct IndexPatch {
    /// `aggregate`, `index_only`, `member` or `private`
    visibility: Option<String>,
    sort_no: Option<i32>,
    index_name: Option<String>,
}

/// An index's settings.
#[derive(ToSchema)]
pub struct IndexSettings {
    index_code: String,
    index_name: String,
    sort_no: i32,
    /// `aggregate`, `index_only`, `member` or `private`
    visibility: String,
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
