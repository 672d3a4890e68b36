//! A member's API keys on the website: the list, creating a key (shown once, in the
//! answer to the form that made it), rotating, renaming and deleting one.
//!
//! Every change goes through `Accounts` as the JSON endpoints do. A key's secret must
//! never appear in a URL or a cached page: only in the private answer to its form.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::{CreatedKey, KeyView, NewKey};
use iq_actors::caller::Account;
use iq_actors::{ApiError, ErrorCode};

use super::{member, refused, DeletedQuery};
use crate::http::author;
use crate::site::chrome::Chrome;
use crate::site::expiry::expiry_of;
use crate::site::form::Form;
use crate::site::format::{long_date, minute};
use crate::site::path_part::PathPart;
use crate::site::reading::Reading;
use crate::site::respond::{render, see_other, Caching, PageError, PageResult};
use crate::state::AppState;

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
            expires: key.expires_at.map_or_else(|| "never".to_owned(), minute),
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
#[template(path = "keys.html")]
struct KeysPage {
    chrome: Chrome,
    keys: Vec<KeyLine>,
    indexes: Vec<String>,
    problem: Option<String>,
    name: String,
    /// A key was just deleted (the redirect after the confirmation says so).
    deleted: bool,
    /// The plan's number of keys, when the member has them all: no form then.
    at_limit: Option<u32>,
}

/// `GET /account/keys`.
pub async fn keys(
    req: HttpRequest,
    query: web::Query<DeletedQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let (reading, account) = member(&req, &state).await?;
    let mut page = keys_page(&req, &state, &reading, &account, None, String::new()).await?;
    page.deleted = query.deleted();
    render(&page, StatusCode::OK, Caching::Private)
}

async fn keys_page(
    req: &HttpRequest,
    state: &AppState,
    reading: &Reading,
    account: &Account,
    problem: Option<String>,
    name: String,
) -> Result<KeysPage, PageError> {
    let keys = state.accounts.list_keys(account).await?;
    let at_limit = reading
        .membership
        .quota
        .max_keys
        .filter(|max| keys.len() >= *max as usize);
    Ok(KeysPage {
        chrome: Chrome::new(req, state, Some(account), "keys"),
        keys: keys.into_iter().map(KeyLine::from).collect(),
        indexes: reading.membership.indexes.clone(),
        problem,
        name,
        deleted: false,
        at_limit,
    })
}

#[derive(Template)]
#[template(path = "key_created.html")]
struct KeyCreated {
    chrome: Chrome,
    key: String,
    line: KeyLine,
}

/// The page that shows a new secret, created or rotated: the only time it is shown.
fn key_shown_once(
    req: &HttpRequest,
    state: &AppState,
    account: &Account,
    shown: CreatedKey,
) -> PageResult {
    let page = KeyCreated {
        chrome: Chrome::new(req, state, Some(account), "keys"),
        key: shown.key,
        line: KeyLine::from(shown.view),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/keys`: creates a key and shows it, once.
pub async fn create_key(req: HttpRequest, form: Form, state: web::Data<AppState>) -> PageResult {
    let (reading, account) = member(&req, &state).await?;
    let name = form.one("name").unwrap_or_default().trim().to_owned();
    let index_codes = form.all("index_code");
    let new = new_key(name.clone(), index_codes, form.one("expires_on"));
    let created = match new {
        Ok(new) => state.accounts.create_key(&author(&account), new).await,
        Err(error) => Err(error),
    };
    match created {
        Ok(created) => key_shown_once(&req, &state, &account, created),
        Err(error) => {
            refused(error, |problem| {
                keys_page(&req, &state, &reading, &account, Some(problem), name)
            })
            .await
        }
    }
}

/// The key the form asks for: an expiry date means the key works through that day
/// (UTC) and stops at the next midnight.
fn new_key(
    name: String,
    index_codes: Vec<String>,
    expires_on: Option<&str>,
) -> Result<NewKey, ApiError> {
    let expires_at = expiry_of(expires_on)?;
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
    id: PathPart,
    _: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let rotated = state.accounts.rotate_key(&author(&account), &id).await?;
    key_shown_once(&req, &state, &account, rotated)
}

/// `POST /account/keys/{id}/rename`.
pub async fn rename_key(
    req: HttpRequest,
    id: PathPart,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (reading, account) = member(&req, &state).await?;
    let name = form.text("name");
    let rename = iq_actors::accounts::KeyRename { name };
    match state
        .accounts
        .rename_key(&author(&account), &id, rename)
        .await
    {
        Ok(_) => Ok(see_other("/account/keys").finish()),
        Err(error) if error.code == ErrorCode::InvalidRequest => {
            let status = crate::http::envelope::status_for(error.code);
            let page = keys_page(
                &req,
                &state,
                &reading,
                &account,
                Some(error.message),
                String::new(),
            )
            .await?;
            render(&page, status, Caching::Private)
        }
        Err(error) => Err(error.into()),
    }
}

#[derive(Template)]
#[template(path = "key_delete.html")]
struct KeyDelete {
    chrome: Chrome,
    line: KeyLine,
}

/// `GET /account/keys/{id}/delete`: what deleting the key means, and the button that
/// does it (a page of its own, so it works without script and asks before it acts).
pub async fn confirm_delete_key(
    req: HttpRequest,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let key = state
        .accounts
        .list_keys(&account)
        .await?
        .into_iter()
        .find(|k| k.id == *id)
        .ok_or_else(|| PageError::not_found("You have no key with this id."))?;
    let page = KeyDelete {
        chrome: Chrome::new(&req, &state, Some(&account), "keys"),
        line: KeyLine::from(key),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/keys/{id}/delete`: deletes it, then the keys page says so.
pub async fn delete_key(
    req: HttpRequest,
    id: PathPart,
    _: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    state.accounts.delete_key(&author(&account), &id).await?;
    Ok(see_other("/account/keys?deleted=1").finish())
}
