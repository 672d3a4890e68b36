//! The member area: log in and out with a form, the account page, API keys (list,
//! create with the key shown once, delete), webhooks, usage over the last 30 days, and
//! one's password and sessions; with the pages reached by a one-time link before any
//! session: a password reset and the first start's set-up.
//!
//! A login here opens the same session as `POST /api/v1/auth/login`, under the same
//! limits (D23). Every form carries its CSRF token; a created key appears once, in the
//! answer to the form that made it (never in a URL, never cached).
//!
//! Here the account and usage pages; the login form is [`login`], the key pages
//! [`api_keys`], the webhook pages [`webhooks`], the password and sessions page
//! [`security`], the link pages [`reset`] and [`setup`]. No page here may be cached for
//! anyone but its member ([`Caching::Private`]).
mod api_keys;
mod login;
mod reset;
mod security;
mod setup;
mod webhooks;

use std::future::Future;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::caller::Account;
use iq_actors::ApiError;
use serde::Deserialize;

use super::chrome::Chrome;
use super::format::{delay, long_date, parse_wire};
use super::reading::{read, Reading};
use super::respond::{render, Caching, PageError, PageResult};
use super::usage::{self, UsageDay};
use crate::http::envelope::status_for;
use crate::state::AppState;

pub use api_keys::{
    confirm_delete_key, create_key, delete_key, keys, rename_key, rotate_key, KeyLine,
};
pub use login::{login, login_code, login_form, logout};
pub use reset::{reset, reset_form};
pub use security::{
    change_password, confirm_two_factor, disable_two_factor, end_session, security,
    start_two_factor,
};
pub use setup::{setup, setup_form};
pub use webhooks::{
    confirm_delete_webhook, create_webhook, delete_webhook, recover_deliveries, replay_delivery,
    rotate_secret, test_webhook, webhook_log, webhooks, HookLine,
};

/// The signed-in account and what it may see; without one, the way to the login page.
/// A form of the member area is checked before this asks (its `Form` is an argument of
/// the handler).
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

/// The answer to a member's form the service refused: the page made again by `page`
/// from the refusal's message, under the refusal's status, so the member sees what to
/// change beside the form; a fault of the service stays a fault.
async fn refused<P, F, Fut>(error: ApiError, page: F) -> PageResult
where
    P: Template,
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<P, PageError>>,
{
    let status = status_for(error.code);
    if status.is_server_error() {
        return Err(error.into());
    }
    render(&page(error.message).await?, status, Caching::Private)
}

/// The query of a list that a deletion leads back to: `?deleted=1` has the list say so.
#[derive(Deserialize)]
pub struct DeletedQuery {
    deleted: Option<String>,
}

impl DeletedQuery {
    /// Whether the list is shown after a deletion.
    fn deleted(&self) -> bool {
        self.deleted.is_some()
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
    let page = UsagePage {
        chrome: Chrome::new(&req, &state, Some(&account), "usage"),
        chart: usage::chart(&days),
        total: days.iter().map(|d| d.calls).sum(),
        days: usage::rows(&days),
    };
    render(&page, StatusCode::OK, Caching::Private)
}
