//! Users (super administrators): a searchable, paged list; a new user; one user's
//! settings (tier, role, active, API access), keys and usage.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::{NewUser, UserPatch, UserSummary};
use iq_actors::paging::SearchText;
use serde::Deserialize;

use super::pager::Pager;
use super::{Staff, SuperAdmin};
use crate::site::chrome::Chrome;
use crate::site::form::Sent;
use crate::site::format::{long_date, minute};
use crate::site::member::KeyLine;
use crate::site::path_part::PathPart;
use crate::site::respond::{is_refusal, render, see_other, status_with, Caching, PageResult};
use crate::site::usage::{self, UsageDay};
use crate::state::AppState;

#[derive(Deserialize)]
pub struct ListQuery {
    q: Option<String>,
    page: Option<i64>,
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct UsersPage {
    chrome: Chrome,
    users: Vec<UserSummary>,
    q: String,
    pager: Pager,
    problem: Option<String>,
    new_username: String,
}

async fn list_page(
    req: &HttpRequest,
    staff: &Staff<SuperAdmin>,
    state: &AppState,
    query: &ListQuery,
    problem: Option<String>,
    new_username: String,
) -> PageResult {
    let q = SearchText::new("The search", query.q.as_deref())?;
    let (page, request) = Pager::request(query.page)?;
    let found = state.accounts.list_users(request, &q).await?;
    let status = status_with(&problem, StatusCode::BAD_REQUEST);
    let page = UsersPage {
        chrome: staff.chrome(req, state),
        pager: Pager::new(page, found.total, &[("q", q.as_str())]),
        users: found.items,
        q: q.as_str().to_owned(),
        problem,
        new_username,
    };
    render(&page, status, Caching::Private)
}

/// `GET /admin/users?q=&page=`.
pub async fn list(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    list_page(&req, &staff, &state, &query, None, String::new()).await
}

/// `POST /admin/users`: a new user.
pub async fn create(
    req: HttpRequest,
    Sent(staff, form): Sent<Staff<SuperAdmin>>,
    state: web::Data<AppState>,
) -> PageResult {
    let username = form.one("username").unwrap_or_default().trim().to_owned();
    let new = NewUser {
        username: username.clone(),
        password: form.text("password"),
        role: form.one("role").map(str::to_owned),
        tier: form.one("tier").map(str::to_owned),
    };
    match state.accounts.create_user(&staff.author(), new).await {
        Ok(user) => Ok(see_other(&format!("/admin/users/{}", user.account.user_id)).finish()),
        Err(error) if is_refusal(&error) => {
            let query = ListQuery {
                q: None,
                page: None,
            };
            list_page(&req, &staff, &state, &query, Some(error.message), username).await
        }
        Err(error) => Err(error.into()),
    }
}

#[derive(Template)]
#[template(path = "admin/user.html")]
struct UserPage {
    chrome: Chrome,
    id: String,
    username: String,
    role: &'static str,
    tier: String,
    active: bool,
    api_access: bool,
    created: String,
    tiers: Vec<String>,
    keys: Vec<KeyLine>,
    chart: String,
    usage: Vec<UsageDay>,
    problem: Option<String>,
    saved: bool,
}

async fn user_page(
    req: &HttpRequest,
    staff: &Staff<SuperAdmin>,
    state: &AppState,
    id: &str,
    problem: Option<String>,
) -> PageResult {
    let detail = state.accounts.user_detail(id).await?;
    let tiers = state.tiers.list().await?;
    let status = status_with(&problem, StatusCode::BAD_REQUEST);
    let page = UserPage {
        chrome: staff.chrome(req, state),
        id: id.to_owned(),
        username: detail.user.account.username.clone(),
        role: detail.user.account.role.as_str(),
        tier: detail.user.tier.clone(),
        active: detail.user.active,
        api_access: detail.user.api_access,
        created: long_date(detail.user.created_at.date_naive()),
        tiers: tiers.into_iter().map(|t| t.name).collect(),
        keys: detail.keys.into_iter().map(KeyLine::from).collect(),
        chart: usage::chart(&detail.usage),
        usage: usage::rows(&detail.usage),
        problem,
        saved: req.query_string().contains("saved=1"),
    };
    render(&page, status, Caching::Private)
}

/// `GET /admin/users/{id}`.
pub async fn show(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    user_page(&req, &staff, &state, &id, None).await
}

/// `POST /admin/users/{id}`: tier, role, active and API access as the form says.
pub async fn save(
    req: HttpRequest,
    Sent(staff, form): Sent<Staff<SuperAdmin>>,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let patch = UserPatch {
        tier: form.one("tier").map(str::to_owned),
        role: form.one("role").map(str::to_owned),
        active: Some(form.one("active").is_some()),
        api_access: Some(form.one("api_access").is_some()),
    };
    match state.accounts.patch_user(&staff.author(), &id, patch).await {
        Ok(_) => Ok(see_other(&format!("/admin/users/{id}?saved=1")).finish()),
        Err(error)
            if matches!(
                error.code,
                iq_actors::ErrorCode::InvalidRequest | iq_actors::ErrorCode::Conflict
            ) =>
        {
            user_page(&req, &staff, &state, &id, Some(error.message)).await
        }
        Err(error) => Err(error.into()),
    }
}

#[derive(Template)]
#[template(path = "admin/reset_link.html")]
struct ResetLinkPage {
    chrome: Chrome,
    id: String,
    username: String,
    link: String,
    expires: String,
}

/// `POST /admin/users/{id}/reset`: a one-time password reset link, shown this once.
pub async fn issue_reset(
    req: HttpRequest,
    Sent(staff, _): Sent<Staff<SuperAdmin>>,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let issued = state.accounts.issue_reset(&staff.author(), &id).await?;
    let page = ResetLinkPage {
        chrome: staff.chrome(&req, &state),
        id: id.to_string(),
        link: format!("{}{}", state.site.base_url(&req), issued.link),
        username: issued.username,
        expires: minute(issued.expires_at),
    };
    // The link opens the account: `Private` pages are never stored.
    render(&page, StatusCode::OK, Caching::Private)
}
