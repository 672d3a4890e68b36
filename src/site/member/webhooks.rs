//! A member's webhooks on the website (D22, D27): the endpoints with their state, adding
//! one (the secret shown once, in the answer to the form that made it, with a copy
//! button), a test message, the delivery log with a replay per delivery, rotating the
//! secret (the new one shown once), recovering the failed deliveries since an instant,
//! and deleting one after a page that asks. Every form works without script and carries its CSRF token.
//!
//! Every change goes through `Webhooks` as the JSON endpoints do. A secret must never
//! appear in a URL or a cached page.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use iq_actors::caller::Account;
use iq_actors::webhooks::{
    AttemptView, NewWebhook, Recover, WebhookView, EVENT_TYPES, RECOVER_WITHIN,
};
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
    /// For a rotated secret: until when the old one signs beside it.
    rotated_until: Option<String>,
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
                rotated_until: None,
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
    /// Deliveries a recovery just queued again.
    recovered: Option<i64>,
    /// The recovery form's instant: a day ago, as `datetime-local` wants it (UTC), and
    /// the earliest it accepts.
    recover_from: String,
    recover_earliest: String,
    problem: Option<String>,
}

#[derive(Deserialize)]
pub struct LogQuery {
    queued: Option<String>,
    recovered: Option<i64>,
}

/// `GET /account/webhooks/{id}`: the endpoint's delivery log.
pub async fn webhook_log(
    req: HttpRequest,
    id: PathPart,
    query: web::Query<LogQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let mut page = log_page(&req, &state, &account, &id, None).await?;
    page.queued = query.queued.is_some();
    page.recovered = query.recovered;
    render(&page, StatusCode::OK, Caching::Private)
}

async fn log_page(
    req: &HttpRequest,
    state: &AppState,
    account: &Account,
    id: &str,
    problem: Option<String>,
) -> Result<HookLog, PageError> {
    let line = HookLine::from(state.webhooks.get(account, id).await?);
    let attempts = state.webhooks.log(account, id).await?;
    let now = state.site.clock.now();
    let local = |at: DateTime<Utc>| at.format(RECOVER_INPUT).to_string();
    Ok(HookLog {
        chrome: Chrome::new(req, state, Some(account), "webhooks"),
        line,
        attempts: attempts.into_iter().map(AttemptLine::from).collect(),
        queued: false,
        recovered: None,
        recover_from: local(now - TimeDelta::days(1)),
        recover_earliest: local(now - TimeDelta::from_std(RECOVER_WITHIN).unwrap_or_default()),
        problem,
    })
}

/// What a `datetime-local` input sends and shows (to the minute; read as UTC here).
const RECOVER_INPUT: &str = "%Y-%m-%dT%H:%M";

/// `POST /account/webhooks/{id}/rotate`: a new secret, shown this once; the old one
/// signs beside it for a day.
pub async fn rotate_secret(
    req: HttpRequest,
    id: PathPart,
    _: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let rotated = state.webhooks.rotate_secret(&author(&account), &id).await?;
    let page = HookCreated {
        chrome: Chrome::new(&req, &state, Some(&account), "webhooks"),
        secret: rotated.secret,
        line: HookLine::from(state.webhooks.get(&account, &id).await?),
        rotated_until: Some(minute(rotated.previous_until)),
    };
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/webhooks/{id}/recover` with the form's `since` (UTC, to the minute):
/// queues the failed deliveries since then again, and the log says how many.
pub async fn recover_deliveries(
    req: HttpRequest,
    id: PathPart,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    let typed = form.one("since").unwrap_or_default().trim();
    let since = NaiveDateTime::parse_from_str(typed, RECOVER_INPUT)
        .map(|at| at.and_utc().to_rfc3339())
        .unwrap_or_else(|_| typed.to_owned());
    match state
        .webhooks
        .recover(&author(&account), &id, Recover { since })
        .await
    {
        Ok(recovered) => Ok(see_other(&format!(
            "/account/webhooks/{id}?recovered={}",
            recovered.requeued
        ))
        .finish()),
        Err(error) => {
            refused(error, |problem| {
                log_page(&req, &state, &account, &id, Some(problem))
            })
            .await
        }
    }
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
