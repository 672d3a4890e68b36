//! The member area: log in and out with a form, the account page, API keys (list,
//! create with the key shown once, delete) and usage over the last 30 days.
//!
//! A login here opens the same session as `POST /api/v1/auth/login`, under the same
//! limits (D6). Every form carries its CSRF token; a created key appears once, in the
//! answer to the form that made it (never in a URL, never cached).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use chrono::{NaiveTime, TimeDelta};
use iq_actors::accounts::{Credentials, KeyView, NewKey};
use iq_actors::caller::Account;
use iq_actors::{ApiError, ErrorCode};

use super::chart::{self, FULL};
use super::chrome::Chrome;
use super::form::Form;
use super::form_token;
use super::format::{delay, long_date, parse_wire};
use super::reading::{read, Reading};
use super::respond::{render, see_other, Caching, PageError, PageResult};
use crate::http::session::{self, session_id};
use crate::routes::AppState;

#[derive(Template)]
#[template(path = "login.html")]
struct Login {
    chrome: Chrome,
    username: String,
    problem: Option<String>,
    max_failures: i32,
}

/// `GET /login`: the form (a signed-in member goes to the account page instead).
pub async fn login_form(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    if reading.signed_in() {
        return Ok(see_other("/account").finish());
    }
    login_page(&req, &state, String::new(), None, StatusCode::OK)
}

/// The login form; a browser without a cookie to bind its token to gets one.
fn login_page(
    req: &HttpRequest,
    state: &AppState,
    username: String,
    problem: Option<String>,
    status: StatusCode,
) -> PageResult {
    let mut chrome = Chrome::new(req, state, None, "login");
    let fresh_cookie = form_token::binding(req)
        .is_none()
        .then(|| form_token::pre_session_cookie(state.cookie_secure));
    if let Some(cookie) = &fresh_cookie {
        chrome.form_token = state.site.forms.token(cookie.value());
    }
    let page = Login {
        chrome,
        username,
        problem,
        max_failures: iq_actors::accounts::login_limit::PER_USER,
    };
    let mut response = render(&page, status, Caching::Private)?;
    if let Some(cookie) = fresh_cookie {
        response.add_cookie(&cookie).map_err(ApiError::internal)?;
    }
    Ok(response)
}

/// `POST /login`: opens a session and goes to the account page; a refusal shows the
/// form again with what went wrong.
pub async fn login(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    let form = Form::read(&req, payload, &state).await?;
    let username = form.one("username").unwrap_or_default().to_owned();
    let credentials = Credentials {
        username: username.clone(),
        password: form.one("password").unwrap_or_default().to_owned(),
    };
    match state
        .accounts
        .login(credentials, state.client_ip(&req))
        .await
    {
        Ok(opened) => {
            let cookie = session::cookie(
                &opened,
                state.cookie_secure,
                state.accounts.session_policy(),
            );
            Ok(see_other("/account").cookie(cookie).finish())
        }
        Err(error) => {
            let status = crate::http::envelope::status_for(error.code);
            let problem = match error.code {
                ErrorCode::InvalidCredentials => "Wrong user name or password.".to_owned(),
                _ => error.message.clone(),
            };
            if status.is_server_error() {
                return Err(error.into());
            }
            let mut response = login_page(&req, &state, username, Some(problem), status)?;
            if error.code == ErrorCode::RateLimited {
                let wait = state.protection.seconds_to_next_minute().to_string();
                response.headers_mut().insert(
                    actix_web::http::header::RETRY_AFTER,
                    wait.parse().map_err(ApiError::internal)?,
                );
            }
            Ok(response)
        }
    }
}

/// `POST /logout`: ends the session and goes home.
pub async fn logout(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    Form::read(&req, payload, &state).await?;
    if let Some(id) = session_id(&req) {
        state.accounts.logout(&id).await?;
    }
    Ok(see_other("/")
        .cookie(session::removal_cookie(state.cookie_secure))
        .finish())
}

/// The signed-in account and what it may see; without one, the way to the login page.
async fn member(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<(Reading, Account), PageError> {
    let reading = read(req, state, Vec::new()).await?;
    match reading.membership.user.clone() {
        Some(account) => Ok((reading, account)),
        None => Err(PageError::log_in_first()),
    }
}

pub struct KeyLine {
    pub id: String,
    pub name: String,
    pub hint: String,
    pub state: &'static str,
    pub indexes: String,
    pub expires: String,
    pub created: String,
    pub calls_today: i64,
}

impl From<KeyView> for KeyLine {
    fn from(key: KeyView) -> Self {
        KeyLine {
            indexes: key
                .index_codes
                .map_or_else(|| "all of your plan's".to_owned(), |c| c.join(", ")),
            expires: key.expires_at.map_or_else(
                || "never".to_owned(),
                |at| at.format("%-d %b %Y %H:%M UTC").to_string(),
            ),
            created: long_date(key.created_at.date_naive()),
            calls_today: key.calls_today.unwrap_or(0),
            id: key.id,
            name: key.name,
            hint: key.key_hint,
            state: key.state,
        }
    }
}

#[derive(Template)]
#[template(path = "account.html")]
struct AccountPage {
    chrome: Chrome,
    username: String,
    role: &'static str,
    tier: String,
    delay: String,
    cutoff_long: String,
    cutoff_wire: String,
    per_minute: i64,
    per_day: i64,
    max_keys: String,
    max_rows: u32,
    indexes: Vec<String>,
    keys: Vec<KeyLine>,
    calls_today: i64,
}

/// `GET /account`: tier, delay, data cutoff, quotas and today's use.
pub async fn account(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let (reading, account) = member(&req, &state).await?;
    let keys = state.accounts.list_keys(&account).await?;
    let today = state.accounts.account_usage(&account, 1).await?;
    let membership = &reading.membership;
    let cutoff = membership.data_cutoff.as_deref().and_then(parse_wire);
    let page = AccountPage {
        chrome: Chrome::new(&req, &state, Some(&account), "account"),
        username: account.username.clone(),
        role: account.role.as_str(),
        tier: membership.tier.clone(),
        delay: delay(membership.delay_days),
        cutoff_long: cutoff.map(long_date).unwrap_or_default(),
        cutoff_wire: membership.data_cutoff.clone().unwrap_or_default(),
        per_minute: membership.quota.per_minute,
        per_day: membership.quota.per_day,
        max_keys: membership
            .quota
            .max_keys
            .map_or_else(|| "unlimited".to_owned(), |n| n.to_string()),
        max_rows: membership.quota.max_rows,
        indexes: membership.indexes.clone(),
        calls_today: today.first().map_or(0, |d| d.calls),
        keys: keys.into_iter().map(KeyLine::from).collect(),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

#[derive(Template)]
#[template(path = "keys.html")]
struct KeysPage {
    chrome: Chrome,
    keys: Vec<KeyLine>,
    indexes: Vec<String>,
    problem: Option<String>,
    name: String,
}

/// `GET /account/keys`.
pub async fn keys(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let (reading, account) = member(&req, &state).await?;
    keys_page(
        &req,
        &state,
        &reading,
        &account,
        None,
        String::new(),
        StatusCode::OK,
    )
    .await
}

async fn keys_page(
    req: &HttpRequest,
    state: &AppState,
    reading: &Reading,
    account: &Account,
    problem: Option<String>,
    name: String,
    status: StatusCode,
) -> PageResult {
    let keys = state.accounts.list_keys(account).await?;
    let page = KeysPage {
        chrome: Chrome::new(req, state, Some(account), "keys"),
        keys: keys.into_iter().map(KeyLine::from).collect(),
        indexes: reading.membership.indexes.clone(),
        problem,
        name,
    };
    render(&page, status, Caching::Private)
}

#[derive(Template)]
#[template(path = "key_created.html")]
struct KeyCreated {
    chrome: Chrome,
    key: String,
    line: KeyLine,
}

/// `POST /account/keys`: creates a key and shows it, once.
pub async fn create_key(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    let form = Form::read(&req, payload, &state).await?;
    let (reading, account) = member(&req, &state).await?;
    let name = form.one("name").unwrap_or_default().trim().to_owned();
    let index_codes = form.all("index_code");
    let new = new_key(name.clone(), index_codes, form.one("expires_on"));
    let created = match new {
        Ok(new) => state.accounts.create_key(&account, new).await,
        Err(error) => Err(error),
    };
    match created {
        Ok(created) => {
            let page = KeyCreated {
                chrome: Chrome::new(&req, &state, Some(&account), "keys"),
                key: created.key,
                line: KeyLine::from(created.view),
            };
            render(&page, StatusCode::OK, Caching::Private)
        }
        Err(error) if !crate::http::envelope::status_for(error.code).is_server_error() => {
            let status = crate::http::envelope::status_for(error.code);
            keys_page(
                &req,
                &state,
                &reading,
                &account,
                Some(error.message),
                name,
                status,
            )
            .await
        }
        Err(error) => Err(error.into()),
    }
}

/// The key the form asks for: an expiry date means the key works through that day
/// (UTC) and stops at the next midnight.
fn new_key(
    name: String,
    index_codes: Vec<String>,
    expires_on: Option<&str>,
) -> Result<NewKey, ApiError> {
    let expires_at = match expires_on.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(text) => {
            let date = iq_actors::wire_date::WireDate::parse(text)
                .map_err(|_| ApiError::invalid("The expiry date must be a date like 2027-01-31."))?
                .0;
            Some(
                (date + TimeDelta::days(1))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )
        }
    };
    Ok(NewKey {
        name,
        index_codes: (!index_codes.is_empty()).then_some(index_codes),
        ip_allowlist: None,
        expires_at,
    })
}

/// `POST /account/keys/{id}/rotate`: a new secret for the key, shown once; the old
/// one is refused from now on. Name, scopes, range, addresses, expiry and limits stay.
pub async fn rotate_key(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    Form::read(&req, payload, &state).await?;
    let (_, account) = member(&req, &state).await?;
    let rotated = state.accounts.rotate_key(&account, &id).await?;
    let page = KeyCreated {
        chrome: Chrome::new(&req, &state, Some(&account), "keys"),
        key: rotated.key,
        line: KeyLine::from(rotated.view),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/keys/{id}/rename`.
pub async fn rename_key(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    let form = Form::read(&req, payload, &state).await?;
    let (reading, account) = member(&req, &state).await?;
    let name = form.one("name").unwrap_or_default().to_owned();
    let rename = iq_actors::accounts::KeyRename { name };
    match state.accounts.rename_key(&account, &id, rename).await {
        Ok(_) => Ok(see_other("/account/keys").finish()),
        Err(error) if error.code == ErrorCode::InvalidRequest => {
            let status = crate::http::envelope::status_for(error.code);
            keys_page(
                &req,
                &state,
                &reading,
                &account,
                Some(error.message),
                String::new(),
                status,
            )
            .await
        }
        Err(error) => Err(error.into()),
    }
}

/// `POST /account/keys/{id}/delete`.
pub async fn delete_key(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> PageResult {
    Form::read(&req, payload, &state).await?;
    let (_, account) = member(&req, &state).await?;
    if id.contains('\0') {
        return Err(PageError::not_found("There is no such key."));
    }
    state.accounts.delete_key(&account, &id).await?;
    Ok(see_other("/account/keys").finish())
}

pub struct UsageDay {
    pub date_long: String,
    pub date_wire: String,
    pub calls: i64,
}

#[derive(Template)]
#[template(path = "usage.html")]
struct UsagePage {
    chrome: Chrome,
    chart: String,
    days: Vec<UsageDay>,
    total: i64,
}

/// Days of history on the usage page.
const USAGE_DAYS: u32 = 30;

/// `GET /account/usage`: the account's calls per UTC day over the last 30 days.
pub async fn usage(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let days = state.accounts.account_usage(&account, USAGE_DAYS).await?;
    let mut series: Vec<_> = days
        .iter()
        .filter_map(|d| parse_wire(&d.date).map(|date| (date, d.calls.to_string())))
        .collect();
    series.reverse();
    let page = UsagePage {
        chrome: Chrome::new(&req, &state, Some(&account), "usage"),
        chart: chart::line(&series, FULL, "API calls per day").unwrap_or_default(),
        total: days.iter().map(|d| d.calls).sum(),
        days: days
            .iter()
            .filter_map(|d| {
                parse_wire(&d.date).map(|date| UsageDay {
                    date_long: long_date(date),
                    date_wire: d.date.clone(),
                    calls: d.calls,
                })
            })
            .collect(),
    };
    render(&page, StatusCode::OK, Caching::Private)
}
