//! Webhooks (administrators): every account's endpoints with their state, deliveries
//! waiting, in flight and given up, the last day's delivery health and the latest
//! attempt, those in trouble first: where to look
//! when a member says they were not told. Read only: an endpoint is its owner's to
//! change.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::webhooks::{OwnedWebhookView, ADMIN_LIST};

use super::{Admin, Staff};
use crate::site::chrome::Chrome;
use crate::site::format::minute;
use crate::site::member::HookLine;
use crate::site::respond::{render, Caching, PageResult};
use crate::state::AppState;

pub struct AdminHookLine {
    pub line: HookLine,
    pub owner_id: String,
    pub owner: String,
    pub pending: i64,
    pub failed: i64,
    /// The latest attempt, in words; empty when none was made.
    pub last: String,
    /// The last 24 hours in words: "12 of 14 answered 2xx, p95 180 ms", or "none".
    pub health: String,
    pub in_flight: i64,
}

impl From<OwnedWebhookView> for AdminHookLine {
    fn from(h: OwnedWebhookView) -> Self {
        let last = match (h.last_attempt_at, h.last_status, h.last_error) {
            (None, ..) => String::new(),
            (Some(at), status, error) => format!(
                "{}: {}",
                minute(at),
                match (status, error) {
                    (Some(status), _) => format!("HTTP {status}"),
                    (None, Some(error)) => error,
                    (None, None) => "no answer".to_owned(),
                }
            ),
        };
        let health = match h.p95_latency_ms_24h {
            None => "no attempt".to_owned(),
            Some(p95) => format!(
                "{} of {} answered 2xx, p95 {p95} ms",
                h.delivered_24h, h.attempts_24h
            ),
        };
        AdminHookLine {
            health,
            in_flight: h.in_flight,
            owner_id: h.owner.user_id.to_string(),
            owner: h.owner.username.clone(),
            pending: h.pending,
            failed: h.failed,
            last,
            line: HookLine::from(h.webhook),
        }
    }
}

#[derive(Template)]
#[template(path = "admin/webhooks.html")]
struct WebhooksPage {
    chrome: Chrome,
    hooks: Vec<AdminHookLine>,
    most: i64,
}

/// `GET /admin/webhooks`.
pub async fn list(req: HttpRequest, staff: Staff<Admin>, state: web::Data<AppState>) -> PageResult {
    let hooks = state.webhooks.all().await?;
    let page = WebhooksPage {
        chrome: staff.chrome(&req, &state),
        hooks: hooks.into_iter().map(AdminHookLine::from).collect(),
        most: ADMIN_LIST,
    };
    render(&page, StatusCode::OK, Caching::Private)
}
