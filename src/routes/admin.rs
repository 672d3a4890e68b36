//! The administrators' endpoints (D7): users, tiers, every key with its settings and
//! usage, index settings. Every one needs a session with the `super_admin` role, except
//! key usage, which any admin may read; changes also need the CSRF token.

use actix_web::{get, patch, post, put, web, HttpRequest};
use iq_actors::accounts;
use iq_actors::audit::AuditFilter;
use iq_actors::paging::SearchText;
use serde::Serialize;

use super::params::{self, AuditQuery, DaysQuery, KeyListQuery, UserListQuery};
use crate::http::{Admin, Answer, Body, HttpError, SessionGuard, SuperAdmin};
use crate::openapi::prelude::*;
use crate::state::AppState;

type Reply<T> = Result<Answer<T>, HttpError>;

/// Create a user
///
/// A user name taken already is 409 / 40901.
#[utoipa::path(
    tag = "admin",
    operation_id = "create_user",
    request_body(content = NewUser, content_type = "application/json"),
    responses(
        (status = 200, description = "The user.", body = UserView),
        CallerRefusals,
        (status = 409, response = Conflict),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[post("/admin/users")]
pub async fn create_user(
    guard: SessionGuard<SuperAdmin>,
    body: Body<accounts::NewUser>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state
            .accounts
            .create_user(&guard.author(), body.value()?)
            .await?,
    ))
}

/// List users
///
/// Users by user name in code-point order (upper case before lower case), each with
/// their live key count and the account's counted calls today.
#[utoipa::path(
    tag = "admin",
    operation_id = "list_users",
    params(UserListQuery),
    responses(
        (status = 200, description = "One page of users.", body = Page<UserSummary>),
        CallerRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[get("/admin/users")]
pub async fn list_users(
    _: SessionGuard<SuperAdmin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let query: UserListQuery = params::parse(req.query_string())?;
    let page = params::standard_page(query.limit.as_deref(), query.offset.as_deref())?;
    let q = SearchText::new("q", query.q.as_deref())?;
    Ok(Answer(state.accounts.list_users(page, &q).await?))
}

/// One user
///
/// The user, their keys that are not deleted (each with today's calls) and the
/// account's calls per UTC day over the last 30 days, newest first.
#[utoipa::path(
    tag = "admin",
    operation_id = "user_detail",
    params(("id" = String, Path, description = "the user's id")),
    responses(
        (status = 200, description = "The user.", body = UserDetail),
        ResourceRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[get("/admin/users/{id}")]
pub async fn user_detail(
    _: SessionGuard<SuperAdmin>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.accounts.user_detail(&id).await?))
}

/// List every key
///
/// Every key that is not deleted, newest first, with its owner and today's calls.
#[utoipa::path(
    tag = "admin",
    operation_id = "list_all_keys",
    params(KeyListQuery),
    responses(
        (status = 200, description = "One page of keys.", body = Page<OwnedKeyView>),
        CallerRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[get("/admin/keys")]
pub async fn list_keys(
    _: SessionGuard<SuperAdmin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let query: KeyListQuery = params::parse(req.query_string())?;
    let page = params::standard_page(query.limit.as_deref(), query.offset.as_deref())?;
    let q = SearchText::new("q", query.q.as_deref())?;
    let keys = state
        .accounts
        .list_all_keys(page, params::id("user_id", query.user_id.as_deref())?, &q)
        .await?;
    Ok(Answer(keys))
}

/// Change a user
///
/// Tier, role, active, API access; absent fields are left alone. The last active super
/// administrator cannot lose the role or be deactivated (409 / 40901).
#[utoipa::path(
    tag = "admin",
    operation_id = "patch_user",
    params(("id" = String, Path, description = "the user's id")),
    request_body(content = UserPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The user.", body = UserView),
        ResourceRefusals,
        (status = 409, response = Conflict),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[patch("/admin/users/{id}")]
pub async fn patch_user(
    guard: SessionGuard<SuperAdmin>,
    id: web::Path<String>,
    body: Body<accounts::UserPatch>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state
            .accounts
            .patch_user(&guard.author(), &id, body.value()?)
            .await?,
    ))
}

/// List tiers
///
/// Both tiers' settings.
#[utoipa::path(
    tag = "admin",
    operation_id = "list_tiers",
    responses(
        (status = 200, description = "The tiers.", body = Vec<Tier>),
        CallerRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[get("/admin/tiers")]
pub async fn tiers(
    _: SessionGuard<SuperAdmin>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(state.tiers.list().await?))
}

/// Replace a tier's settings
///
/// Every setting is required. A change applies from the next call on every instance.
#[utoipa::path(
    tag = "admin",
    operation_id = "replace_tier",
    params(("tier" = String, Path, description = "`free` or `pro`; another name is 404")),
    request_body(content = TierSettings, content_type = "application/json"),
    responses(
        (status = 200, description = "The tier.", body = Tier),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[put("/admin/tiers/{tier}")]
pub async fn replace_tier(
    guard: SessionGuard<SuperAdmin>,
    tier: web::Path<String>,
    body: Body<accounts::TierSettings>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state
            .tiers
            .replace(&guard.author(), &tier, body.value()?)
            .await?,
    ))
}

/// Change any key
///
/// An absent field is left alone; `null` clears a nullable setting (back to the tier's
/// limits, every index, no expiry).
#[utoipa::path(
    tag = "admin",
    operation_id = "patch_key",
    params(("id" = String, Path, description = "the key's id")),
    request_body(content = KeyPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The key's metadata.", body = KeyView),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[patch("/admin/keys/{id}")]
pub async fn patch_key(
    guard: SessionGuard<SuperAdmin>,
    id: web::Path<String>,
    body: Body<accounts::KeyPatch>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state
            .accounts
            .patch_key(&guard.author(), &id, body.value()?)
            .await?,
    ))
}

/// Change an index's settings
///
/// Visibility, display order and name; absent fields are left alone.
#[utoipa::path(
    tag = "admin",
    operation_id = "patch_index",
    params(("index_code" = String, Path, description = "the index code (case-sensitive)")),
    request_body(content = IndexPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The index's settings.", body = IndexView),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[patch("/admin/indexes/{index_code}")]
pub async fn patch_index(
    guard: SessionGuard<SuperAdmin>,
    index_code: web::Path<String>,
    body: Body<accounts::IndexPatch>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    Ok(Answer(
        state
            .index_settings
            .patch(&guard.author(), &index_code, body.value()?)
            .await?,
    ))
}

/// Usage of any key
///
/// As the owner's own usage endpoint answers it; deleted keys too.
#[utoipa::path(
    tag = "admin",
    operation_id = "key_usage",
    params(("id" = String, Path, description = "the key's id"), DaysQuery),
    responses(
        (status = 200, description = "The key's usage.", body = KeyUsage),
        ResourceRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("admin"))),
)]
#[get("/admin/keys/{id}/usage")]
pub async fn key_usage(
    _: SessionGuard<Admin>,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let days = DaysQuery::read(req.query_string())?;
    Ok(Answer(state.accounts.key_usage(&id, days).await?))
}

/// The audit trail
///
/// Every back-office change, newest first (D23): who made it, when, what it did to what,
/// the thing before and after (never a secret: a key's or password's value does not
/// appear, only that it changed) and the `request_id` of the request that made it. Each
/// record is written in the transaction of its change; none can be changed or deleted.
/// Super administrators only: records hold every user's and key's settings.
#[utoipa::path(
    tag = "admin",
    operation_id = "audit",
    params(AuditQuery),
    responses(
        (status = 200, description = "One page of records.", body = Page<AuditRecord>),
        CallerRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[get("/admin/audit")]
pub async fn audit(
    _: SessionGuard<SuperAdmin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Reply<impl Serialize> {
    let query: AuditQuery = params::parse(req.query_string())?;
    let filter = AuditFilter::parse(
        query.actor.as_deref(),
        query.action.as_deref(),
        query.target.as_deref(),
        query.from.as_deref(),
        query.to.as_deref(),
    )?;
    let page = params::standard_page(query.limit.as_deref(), query.offset.as_deref())?;
    Ok(Answer(state.accounts.audit_trail(&filter, page).await?))
}

/// Issue a password reset link
///
/// A one-time link (`/reset?token=...`, shown once) where user `id` sets a new password
/// within 24 hours; it voids any earlier link of theirs. Using it ends every session of
/// the user. Super administrators only: an administrator could otherwise take over a
/// super administrator's account.
#[utoipa::path(
    tag = "admin",
    operation_id = "issue_password_reset",
    params(("id" = String, Path, description = "the user's id")),
    responses(
        (
            status = 200,
            description = "The link, shown once.",
            body = ResetLink,
            headers(("Cache-Control" = String, description = "`no-store`: the body holds the link")),
        ),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("super_admin"))),
)]
#[post("/admin/users/{id}/password-reset")]
pub async fn issue_password_reset(
    guard: SessionGuard<SuperAdmin>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<impl actix_web::Responder, HttpError> {
    let link = state.accounts.issue_reset(&guard.author(), &id).await?;
    // The link opens the account: no cache may keep it.
    Ok(Answer(link).unstored())
}
