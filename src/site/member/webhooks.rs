//! A member's webhooks on the website (D22): the endpoints with their state, adding one
//! (the secret shown once, in the answer to the form that made it, with a copy button),
//! a test message, the delivery log with a replay per delivery, and deleting one after
//! a page that asks. Every form works without script and carries its CSRF token.
//!
//! Every change goes through `Webhooks` as the JSON endpoints do. A secret must never
//! appear in a URL or a cached page.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use iq_actors::caller::Account;
use iq_actors::webhooks::{AttemptView, NewWebhook, WebhookView, EVENT_TYPES};
use serde::Deserialize;

use super::{member, refused, DeletedQuery};
use crate::http::author;
use crate::site::chrome::Chrome;
use crate::site::form::Form;
use crate::site::format::{long_date, minute, second};
use crate::site::path_part::PathPart;
use crate::site::respond::{render, see_other, Caching, PageError, PageResult};
use crate::state::AppState;

/// An endpoint as a row of the page.
pub struct HookLine {
    pub id: String,
    pub url: String,
    pub events: String,
    pub created: String,
    /// `enabled`, `failing since ...` or `disabled: why`.
    pub state: String,
}

impl From<WebhookView> for HookLine {
    fn from(hook: WebhookView) -> Self {
        let state = match (&hook.disabled_at, &hook.failing_since) {
            (Some(at), _) => format!(
                "disabled on {}: {}",
                long_date(at.date_naive()),
                hook.disabled_reason.as_deref().unwrap_or("")
            ),
            (None, Some(since)) => format!("failing since {}", minute(*since)),
            (None, None) => "enabled".to_owned(),
        };
        HookLine {
            id: hook.id.to_string(),
            url: hook.url,
            events: hook.events.join(", "),
            created: long_date(hook.created_at.date_naive()),
            state,
        }
    }
}

#[derive(Template)]
#[template(path = "webhooks.html")]
struct HooksPage {
    chrome: Chrome,
    hooks: Vec<HookLine>,
    event_types: &'static [&'static str],
    problem: Option<String>,
    url: String,
    deleted: bool,
    /// The plan's number of endpoints, when the member has them all: no form then.
    at_limit: Option<i32>,
}

/// `GET /account/webhooks`.
pub async fn webhooks(
    req: HttpRequest,
    query: web::Query<DeletedQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let mut page = hooks_page(&req, &state, &account, None, String::new()).await?;
    page.deleted = query.deleted();
    render(&page, StatusCode::OK, Caching::Private)
}

async fn hooks_page(
    req: &HttpRequest,
    state: &AppState,
    account: &Account,
    problem: Option<String>,
    url: String,
) -> Result<HooksPage, PageError> {
    let hooks = state.webhooks.list(account).await?;
    let allowed = state.webhooks.allowed(account).await?;
    let held = i32::try_from(hooks.len()).unwrap_or(i32::MAX);
    Ok(HooksPage {
        chrome: Chrome::new(req, state, Some(account), "webhooks"),
        hooks: hooks.into_iter().map(HookLine::from).collect(),
        event_types: &EVENT_TYPES,
        problem,
        url,
        deleted: false,
        at_limit: (held >= allowed).then_some(allowed),
    })
}

#[derive(Template)]
#[template(path = "webhook_created.html")]
struct HookCreated {
    chrome: Chrome,
    secret: String,
    line: HookLine,
}

/// `POST /account/webhooks`: adds an endpoint and shows its secret, once.
pub async fn create_webhook(
    req: HttpRequest,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let url = form.one("url").unwrap_or_default().trim().to_owned();
    let new = NewWebhook {
        url: url.clone(),
        events: form.all("event"),
    };
    match state.webhooks.create(&author(&account), new).await {
        Ok(created) => {
            let page = HookCreated {
                chrome: Chrome::new(&req, &state, Some(&account), "webhooks"),
                secret: created.secret,
                line: HookLine::from(created.webhook),
            };
            render(&page, StatusCode::OK, Caching::Private)
        }
        Err(error) => {
            refused(error, |problem| {
                hooks_page(&req, &state, &account, Some(problem), url)
            })
            .await
        }
    }
}

/// An attempt as a row of the log.
pub struct AttemptLine {
    pub delivery: String,
    pub message: String,
    pub event_type: String,
    pub attempt: i32,
    pub at: String,
    pub status: String,
    pub latency_ms: i32,
    pub error: String,
    pub state: String,
}

impl From<AttemptView> for AttemptLine {
    fn from(a: AttemptView) -> Self {
        AttemptLine {
            delivery: a.delivery_id.to_string(),
            message: a.message_id,
            event_type: a.event_type,
            attempt: a.attempt,
            at: second(a.attempted_at),
            status: a
                .status
                .map_or_else(|| "none".to_owned(), |s| s.to_string()),
            latency_ms: a.latency_ms,
            error: a.error.unwrap_or_default(),
            state: a.state,
        }
    }
}

#[derive(Template)]
#[template(path = "webhook_log.html")]
struct HookLog {
    chrome: Chrome,
    line: HookLine,
    attempts: Vec<AttemptLine>,
    /// A test message or a replay was just queued.
    queued: bool,
}

#[derive(Deserialize)]
pub struct LogQuery {
    queued: Option<String>,
}

/// `GET /account/webhooks/{id}`: the endpoint's delivery log.
pub async fn webhook_log(
    req: HttpRequest,
    id: PathPart,
    query: web::Query<LogQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let line = HookLine::from(state.webhooks.get(&account, &id).await?);
    let attempts = state.webhooks.log(&account, &id).await?;
    let page = HookLog {
        chrome: Chrome::new(&req, &state, Some(&account), "webhooks"),
        line,
        attempts: attempts.into_iter().map(AttemptLine::from).collect(),
        queued: query.queued.is_some(),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/webhooks/{id}/test`: queues a test message, then shows the log.
pub async fn test_webhook(
    req: HttpRequest,
    id: PathPart,
    _: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    state.webhooks.test(&account, &id).await?;
    Ok(to_log(&id))
}

/// `POST /account/webhooks/{id}/replay` with the form's `delivery`: sends it again.
pub async fn replay_delivery(
    req: HttpRequest,
    id: PathPart,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let delivery = form.one("delivery").unwrap_or_default();
    state.webhooks.replay(&account, &id, delivery).await?;
    Ok(to_log(&id))
}

/// The way to the endpoint's log after a message was queued to it: the log says so.
fn to_log(id: &str) -> HttpResponse {
    see_other(&format!("/account/webhooks/{id}?queued=1")).finish()
}

#[derive(Template)]
#[template(path = "webhook_delete.html")]
struct HookDelete {
    chrome: Chrome,
    line: HookLine,
}

/// `GET /account/webhooks/{id}/delete`: what deleting means, and the button that does it.
pub async fn confirm_delete_webhook(
    req: HttpRequest,
    id: PathPart,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let page = HookDelete {
        chrome: Chrome::new(&req, &state, Some(&account), "webhooks"),
        line: HookLine::from(state.webhooks.get(&account, &id).await?),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/webhooks/{id}/delete`: deletes it, then the list says so.
pub async fn delete_webhook(
    req: HttpRequest,
    id: PathPart,
    _: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    state.webhooks.delete(&author(&account), &id).await?;
    Ok(see_other("/account/webhooks?deleted=1").finish())
}
