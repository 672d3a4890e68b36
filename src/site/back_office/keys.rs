//! API keys (super administrators): every live key with its owner, scopes, index
//! range, address allow-list, expiry, limits and today's use, searchable and paged;
//! one key's settings in a form, checked by the same rules as
//! `PATCH /api/v1/admin/keys/{id}`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::TimeDelta;
use iq_actors::accounts::{KeyPatch, OwnedKeyView};
use iq_actors::paging::SearchText;
use iq_actors::ApiError;
use serde::Deserialize;

use super::pager::Pager;
use super::{Staff, SuperAdmin};
use crate::site::chrome::Chrome;
use crate::site::expiry::expiry_of;
use crate::site::form::{Form, Sent};
use crate::site::member::KeyLine;
use crate::site::path_part::PathPart;
use crate::site::respond::{render, see_other, status_with, Caching, PageError, PageResult};
use crate::state::AppState;

#[derive(Deserialize)]
pub struct KeysQuery {
    q: Option<String>,
    user_id: Option<String>,
    page: Option<i64>,
}

pub struct AdminKeyLine {
    pub line: KeyLine,
    pub owner_id: String,
    pub owner: String,
    pub scopes: String,
    pub allowlist: String,
    pub limits: String,
}

impl From<OwnedKeyView> for AdminKeyLine {
    fn from(k: OwnedKeyView) -> Self {
        let limit = |n: Option<i32>| n.map_or_else(|| "tier".to_owned(), |n| n.to_string());
        AdminKeyLine {
            owner_id: k.owner.id,
            owner: k.owner.username,
            scopes: k.key.scopes.join(", "),
            allowlist: if k.key.ip_allowlist.is_empty() {
                "any address".to_owned()
            } else {
                k.key.ip_allowlist.join(", ")
            },
            limits: format!(
                "{} a minute, {} a day",
                limit(k.key.per_minute),
                limit(k.key.per_day)
            ),
            line: KeyLine::from(k.key),
        }
    }
}

#[derive(Template)]
#[template(path = "admin/keys.html")]
struct KeysPage {
    chrome: Chrome,
    keys: Vec<AdminKeyLine>,
    q: String,
    user_id: String,
    pager: Pager,
}

/// `GET /admin/keys?q=&user_id=&page=`.
pub async fn list(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    query: web::Query<KeysQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let q = SearchText::new("The search", query.q.as_deref())?;
    let user_id = query.user_id.as_deref().filter(|u| !u.is_empty());
    let (page, request) = Pager::request(query.page)?;
    let found = state.accounts.list_all_keys(request, user_id, &q).await?;
    let page = KeysPage {
        chrome: staff.chrome(&req, &state),
        pager: Pager::new(
            page,
            found.total,
            &[("q", q.as_str()), ("user_id", user_id.unwrap_or_default())],
        ),
        keys: found.items.into_iter().map(AdminKeyLine::from).collect(),
        q: q.as_str().to_owned(),
        user_id: user_id.unwrap_or_default().to_owned(),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

#[derive(Template)]
#[template(path = "admin/key.html")]
struct KeyPage {
    chrome: Chrome,
    key: AdminKeyLine,
    active: bool,
    per_minute: String,
    per_day: String,
    scopes: Vec<(&'static str, bool)>,
    index_codes: String,
    ip_allowlist: String,
    expires_on: String,
    problem: Option<String>,
}

const SCOPES: [&str; 3] = ["index:read", "quote:read", "calendar:read"];

/// The key `id` with its owner, or a 404 page.
async fn find(state: &AppState, id: &str) -> Result<OwnedKeyView, PageError> {
    state
        .accounts
        .key(id)
        .await?
        .ok_or_else(|| PageError::not_found("There is no such key (it may have been deleted)."))
}

async fn key_page(
    req: &HttpRequest,
    staff: &Staff<SuperAdmin>,
    state: &AppState,
    id: &str,
    problem: Option<String>,
) -> PageResult {
    let key = find(state, id).await?;
    let number = |n: Option<i32>| n.map(|n| n.to_string()).unwrap_or_default();
    let status = status_with(&problem, StatusCode::BAD_REQUEST);
    let page = KeyPage {
        chrome: staff.chrome(req, state),
        active: key.key.state != "disabled",
        per_minute: number(key.key.per_minute),
        per_day: number(key.key.per_day),
        scopes: SCOPES
            .iter()
            .map(|s| (*s, key.key.scopes.iter().any(|k| k == s)))
            .collect(),
        index_codes: key.key.index_codes.clone().unwrap_or_default().join(", "),
        ip_allowlist: key.key.ip_allowlist.join("\n"),
        expires_on: key
            .key
            .expires_at
            .map(|at| (at - TimeDelta::seconds(1)).format("%Y-%m-%d").to_string())
            .unwrap_or_default(),
        key: AdminKeyLine::from(key),
        problem,
    };
    render(&page, status, Caching::Private)
}

/// `GET /admin/keys/{id}`.
pub async fn show(
    req: HttpRequest,
    staff: Staff<SuperAdmin>,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    key_page(&req, &staff, &state, &id, None).await
}

/// `POST /admin/keys/{id}`: every setting as the form says (an empty limit is the
/// tier's, an empty index list every index of the tier, an empty date no expiry).
pub async fn save(
    req: HttpRequest,
    Sent(staff, form): Sent<Staff<SuperAdmin>>,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let saved = match patch_of(&form) {
        Ok(patch) => state
            .accounts
            .patch_key(&staff.author(), &id, patch)
            .await
            .map(drop),
        Err(error) => Err(error),
    };
    match saved {
        Ok(()) => Ok(see_other("/admin/keys").finish()),
        Err(error) if error.code == iq_actors::ErrorCode::InvalidRequest => {
            key_page(&req, &staff, &state, &id, Some(error.message)).await
        }
        Err(error) => Err(error.into()),
    }
}

fn patch_of(form: &Form) -> Result<KeyPatch, ApiError> {
    let limit = |name: &str, label: &str| -> Result<Option<i32>, ApiError> {
        match form.one(name).map(str::trim).unwrap_or_default() {
            "" => Ok(None),
            n => n
                .parse()
                .map(Some)
                .map_err(|_| ApiError::invalid(format!("{label} must be a whole number."))),
        }
    };
    let list = |name: &str, separators: &[char]| -> Vec<String> {
        form.one(name)
            .unwrap_or_default()
            .split(separators)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let index_codes = list("index_codes", &[',', ' ', '\n', '\r']);
    let expires_at = expiry_of(form.one("expires_on"))?;
    Ok(KeyPatch {
        active: Some(form.one("active").is_some()),
        per_minute: Some(limit("per_minute", "Calls a minute")?),
        per_day: Some(limit("per_day", "Calls a day")?),
        scopes: Some(form.all("scope")),
        index_codes: Some((!index_codes.is_empty()).then_some(index_codes)),
        ip_allowlist: Some(list("ip_allowlist", &['\n', '\r', ',', ' '])),
        expires_at: Some(expires_at),
    })
}
