//! `/api/v1/admin/...`: users, every key, tiers, index settings and the trading calendar
//! (D7). Super administrators only, except the calendar and key usage, which any
//! administrator may use. Changes need the session's CSRF token.
//!
//! Here the operations; what they take and answer is in [`schemas`]. Like every area
//! of the document, these stubs must never be routed or called: the handlers are in
//! `src/routes/`.

#![allow(dead_code)] // the functions only carry `#[utoipa::path]`

mod schemas;

use super::errors::{BadRequest, Conflict, Forbidden, InternalError, NotFound, Unauthorized};
use super::keys::{KeyUsage, KeyView};
use super::params::{DaysParam, KeyListParams, UserListParams};
pub use schemas::UserView;
use schemas::{
    CalendarChange, CalendarSummary, IndexPatch, IndexSettings, KeyPage, KeyPatch, NewUser, Tier,
    TierSettings, UserDetail, UserPage, UserPatch,
};

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
