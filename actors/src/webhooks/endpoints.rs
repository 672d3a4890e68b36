//! A member's webhook endpoints (D22, D27): register (the secret shown once), list,
//! delete, rotate the secret, read the delivery log (`resend` sends again). Someone else's
//! endpoint or delivery is 404, never 403, so ids cannot be probed. An account holds at
//! most its tier's `max_webhooks`.
//!
//! It writes endpoints and queues deliveries; it never sends anything (`delivery` does)
//! and never stores or logs a secret.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use deadpool_postgres::Pool;
use serde::{Deserialize, Serialize};

use super::destination::check_url;
use super::ids::{DeliveryId, WebhookId};
use super::signing::SecretKeeper;
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::Account;
use crate::clock::Clock;
use crate::db::Traced;
use crate::events::EVENT_TYPES;
use crate::{ApiError, ErrorCode};

/// The type of a test message.
pub const TEST_TYPE: &str = "webhook.test";
/// Deliveries a log page shows.
pub const LOG_PAGE: i64 = 100;
/// How long the secret before a rotation keeps signing beside the new one (D27).
pub const ROTATION_OVERLAP: Duration = Duration::from_secs(24 * 3600);

/// `POST /api/v1/webhooks/{id}/rotate-secret`: the new secret, shown once.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RotatedSecret {
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "wh_12"))]
    pub id: WebhookId,
    /// `whsec_` and base64: the new signing secret, shown once
    pub secret: String,
    /// until when the old secret's signature is sent beside the new one's
    pub previous_until: DateTime<Utc>,
}

/// `POST /api/v1/webhooks`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewWebhook {
    /// where to send: `https`, a public host (at most 2,048 characters)
    pub url: String,
    /// the event types to send, at least one: `index.published`, `index.revised`
    pub events: Vec<String>,
}

/// An endpoint as its owner sees it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookView {
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "wh_12"))]
    pub id: WebhookId,
    pub url: String,
    pub events: Vec<String>,
    pub created_at: DateTime<Utc>,
    /// since when every attempt has failed; null after a success
    pub failing_since: Option<DateTime<Utc>>,
    /// when it was disabled for failing five days; null while it is enabled
    pub disabled_at: Option<DateTime<Utc>>,
    /// why it was disabled
    pub disabled_reason: Option<String>,
}

/// A new endpoint with its secret, shown this once.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedWebhook {
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// `whsec_` and base64: the Standard Webhooks signing secret, shown once
    pub secret: String,
}

/// One attempt of one delivery, for the log.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptView {
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "dlv_7"))]
    pub delivery_id: DeliveryId,
    /// the `webhook-id` sent (the event's id, or `test_...`)
    pub message_id: String,
    /// `index.published`, `index.revised` or `webhook.test`
    pub event_type: String,
    /// `pending`, `delivered` or `failed`: the delivery's state now
    pub state: String,
    /// 1 for the first attempt
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// the answer's HTTP status; null when none came
    pub status: Option<i32>,
    pub latency_ms: i32,
    /// why no answer came, or why it was not sent
    pub error: Option<String>,
}

/// An endpoint as the back office sees it: whose it is and how its deliveries go.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnedWebhookView {
    #[serde(flatten)]
    pub webhook: WebhookView,
    pub owner: Account,
    /// deliveries waiting (a first attempt, or a retry)
    pub pending: i64,
    /// deliveries given up after their last attempt
    pub failed: i64,
    /// the latest attempt: when, its status (null: no answer) and error
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    /// attempts in the last 24 hours, and how many of them were answered with a 2xx
    pub attempts_24h: i64,
    pub delivered_24h: i64,
    /// the 95th percentile of those attempts' latency; null without attempts
    pub p95_latency_ms_24h: Option<i32>,
    /// attempts being sent right now (at most 4)
    pub in_flight: i64,
}

/// Endpoints the back office lists at most.
pub const ADMIN_LIST: i64 = 500;

/// A queued message.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Queued {
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "dlv_7"))]
    pub delivery_id: DeliveryId,
}

#[derive(Clone)]
pub struct Webhooks {
    pub pool: Pool,
    pub clock: Arc<dyn Clock>,
    pub secrets: SecretKeeper,
    /// `WEBHOOK_ALLOW_PRIVATE`: `http` and private addresses allowed.
    pub allow_private: bool,
}

const VIEW: &str = "w.webhook_id, w.url, w.event_types, w.created_at, w.failing_since, \
                    w.disabled_at, w.disabled_reason";

fn view(row: &tokio_postgres::Row) -> Result<WebhookView, ApiError> {
    Ok(WebhookView {
        id: WebhookId(row.try_get("webhook_id")?),
        url: row.try_get("url")?,
        events: row.try_get("event_types")?,
        created_at: row.try_get("created_at")?,
        failing_since: row.try_get("failing_since")?,
        disabled_at: row.try_get("disabled_at")?,
        disabled_reason: row.try_get("disabled_reason")?,
    })
}

pub(super) fn not_found(what: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no such {what}"))
}

/// At least one event type, each known; duplicates folded, in the list's order.
fn check_events(events: Vec<String>) -> Result<Vec<String>, ApiError> {
    let mut seen = BTreeSet::new();
    let mut kept = Vec::new();
    for event in events {
        if !EVENT_TYPES.contains(&event.as_str()) {
            return Err(ApiError::invalid(format!(
                "field 'events': '{}' is not an event type; expected {}",
                event.chars().take(50).collect::<String>(),
                EVENT_TYPES.join(", ")
            )));
        }
        if seen.insert(event.clone()) {
            kept.push(event);
        }
    }
    if kept.is_empty() {
        return Err(ApiError::invalid(format!(
            "field 'events' must name at least one of {}",
            EVENT_TYPES.join(", ")
        )));
    }
    Ok(kept)
}

impl Webhooks {
    pub async fn create(&self, by: &Author, new: NewWebhook) -> Result<CreatedWebhook, ApiError> {
        let owner = by.owner()?;
        let url = check_url(&new.url, self.allow_private)?;
        let events = check_events(new.events)?;
        let salt = SecretKeeper::new_salt();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        // The owner's row is locked so two creations cannot both take the last place.
        let row = tx
            .query_one_named(
                "webhooks.lock_owner",
                "SELECT t.tier, t.max_webhooks, \
                        (SELECT count(*) FROM webhooks w WHERE w.user_id = u.user_id) AS held \
                 FROM users u JOIN tiers t ON t.tier = u.tier \
                 WHERE u.user_id = $1 FOR UPDATE OF u",
                &[&owner.user_id],
            )
            .await?;
        let (tier, max, held): (String, i32, i64) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        if held >= i64::from(max) {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "the {tier} tier allows {max} webhook endpoint(s); delete one before \
                     adding another"
                ),
            ));
        }
        let row = tx
            .query_one_named(
                "webhooks.insert",
                &format!(
                    "WITH w AS (INSERT INTO webhooks (user_id, url, event_types, secret_salt, \
                                                      created_at) \
                                VALUES ($1, $2, $3, $4, $5) RETURNING *) \
                     SELECT {VIEW} FROM w"
                ),
                &[
                    &owner.user_id,
                    &url.as_str(),
                    &events,
                    &salt,
                    &self.clock.now(),
                ],
            )
            .await?;
        let webhook = view(&row)?;
        let target = Target::new(Kind::Webhook, webhook.id);
        by.record(
            &*tx,
            Entry::new(Action::WebhookCreated, target).after(&webhook),
        )
        .await?;
        tx.commit().await?;
        Ok(CreatedWebhook {
            webhook,
            secret: self.secrets.secret(&salt).to_text(),
        })
    }

    /// How many endpoints the owner's tier allows.
    pub async fn allowed(&self, owner: &Account) -> Result<i32, ApiError> {
        let client = self.pool.get().await?;
        Ok(client
            .query_value_named(
                "webhooks.allowed",
                "SELECT t.max_webhooks FROM users u JOIN tiers t ON t.tier = u.tier \
                 WHERE u.user_id = $1",
                &[&owner.user_id],
            )
            .await?)
    }

    /// Every account's endpoints, those in trouble first (disabled, then failing
    /// longest), at most [`ADMIN_LIST`], each with its delivery health (the last 24
    /// hours' attempts, answered and p95 latency, and what is in flight); for the back
    /// office.
    pub async fn all(&self) -> Result<Vec<OwnedWebhookView>, ApiError> {
        let now = self.clock.now();
        let day_ago = now - TimeDelta::days(1);
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "webhooks.all",
                &format!(
                    "SELECT {VIEW}, u.user_id, u.username, u.role, \
                            d.pending, d.failed, d.in_flight, a.attempted_at, a.status, a.error, \
                            h.attempts_24h, h.delivered_24h, h.p95_latency_ms_24h \
                     FROM webhooks w JOIN users u ON u.user_id = w.user_id \
                     CROSS JOIN LATERAL (\
                       SELECT count(*) FILTER (WHERE state = 'pending') AS pending, \
                              count(*) FILTER (WHERE state = 'failed') AS failed, \
                              count(*) FILTER (WHERE state = 'pending' AND locked_until > $2) \
                                AS in_flight \
                       FROM webhook_deliveries WHERE webhook_id = w.webhook_id) d \
                     CROSS JOIN LATERAL (\
                       SELECT count(*) AS attempts_24h, \
                              count(*) FILTER (WHERE t.status BETWEEN 200 AND 299) AS delivered_24h, \
                              (percentile_disc(0.95) WITHIN GROUP (ORDER BY t.latency_ms))::int \
                                AS p95_latency_ms_24h \
                       FROM webhook_attempts t \
                       JOIN webhook_deliveries x ON x.delivery_id = t.delivery_id \
                       WHERE x.webhook_id = w.webhook_id AND t.attempted_at > $3) h \
                     LEFT JOIN LATERAL (\
                       SELECT t.attempted_at, t.status, t.error FROM webhook_attempts t \
                       JOIN webhook_deliveries x ON x.delivery_id = t.delivery_id \
                       WHERE x.webhook_id = w.webhook_id \
                       ORDER BY t.attempted_at DESC LIMIT 1) a ON true \
                     ORDER BY w.disabled_at IS NULL, w.failing_since IS NULL, \
                              w.failing_since, w.webhook_id DESC \
                     LIMIT $1"
                ),
                &[&ADMIN_LIST, &now, &day_ago],
            )
            .await?;
        rows.iter()
            .map(|row| {
                Ok(OwnedWebhookView {
                    webhook: view(row)?,
                    owner: Account {
                        user_id: row.try_get("user_id")?,
                        username: row.try_get("username")?,
                        role: crate::caller::Role::parse(row.try_get("role")?)
                            .ok_or_else(|| ApiError::internal("a user with an unknown role"))?,
                    },
                    pending: row.try_get("pending")?,
                    failed: row.try_get("failed")?,
                    last_attempt_at: row.try_get("attempted_at")?,
                    last_status: row.try_get("status")?,
                    last_error: row.try_get("error")?,
                    attempts_24h: row.try_get("attempts_24h")?,
                    delivered_24h: row.try_get("delivered_24h")?,
                    p95_latency_ms_24h: row.try_get("p95_latency_ms_24h")?,
                    in_flight: row.try_get("in_flight")?,
                })
            })
            .collect()
    }

    pub async fn list(&self, owner: &Account) -> Result<Vec<WebhookView>, ApiError> {
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "webhooks.list",
                &format!(
                    "SELECT {VIEW} FROM webhooks w WHERE w.user_id = $1 ORDER BY w.webhook_id"
                ),
                &[&owner.user_id],
            )
            .await?;
        rows.iter().map(view).collect()
    }

    /// The owner's endpoint `id`; someone else's, or none, is 404.
    pub async fn get(&self, owner: &Account, id: &str) -> Result<WebhookView, ApiError> {
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let client = self.pool.get().await?;
        let row = client
            .query_opt_named(
                "webhooks.get",
                &format!(
                    "SELECT {VIEW} FROM webhooks w WHERE w.webhook_id = $1 AND w.user_id = $2"
                ),
                &[&id.0, &owner.user_id],
            )
            .await?
            .ok_or_else(|| not_found("webhook"))?;
        view(&row)
    }

    /// Deletes the endpoint with its deliveries; answers its id.
    pub async fn delete(&self, by: &Author, id: &str) -> Result<WebhookId, ApiError> {
        let owner = by.owner()?;
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let deleted = tx
            .query_opt_named(
                "webhooks.delete",
                &format!(
                    "WITH w AS (DELETE FROM webhooks WHERE webhook_id = $1 AND user_id = $2 \
                                RETURNING *) \
                     SELECT {VIEW} FROM w"
                ),
                &[&id.0, &owner.user_id],
            )
            .await?
            .ok_or_else(|| not_found("webhook"))?;
        let before = view(&deleted)?;
        let target = Target::new(Kind::Webhook, before.id);
        by.record(
            &*tx,
            Entry::new(Action::WebhookDeleted, target).before(&before),
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Gives the endpoint a new secret, shown this once (D27). The old one keeps
    /// signing beside it for [`ROTATION_OVERLAP`], so the receiver can switch without
    /// losing a message; a second rotation within that time ends the first one's
    /// overlap (only the secret it replaces signs beside the new one).
    pub async fn rotate_secret(&self, by: &Author, id: &str) -> Result<RotatedSecret, ApiError> {
        let owner = by.owner()?;
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let salt = SecretKeeper::new_salt();
        let now = self.clock.now();
        let until = now + TimeDelta::from_std(ROTATION_OVERLAP).unwrap_or_default();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let row = tx
            .query_opt_named(
                "webhooks.rotate_secret",
                &format!(
                    "WITH w AS (UPDATE webhooks SET previous_salt = secret_salt, \
                                       previous_until = $4, secret_salt = $3 \
                                WHERE webhook_id = $1 AND user_id = $2 RETURNING *) \
                     SELECT {VIEW} FROM w"
                ),
                &[&id.0, &owner.user_id, &salt, &until],
            )
            .await?
            .ok_or_else(|| not_found("webhook"))?;
        let webhook = view(&row)?;
        let target = Target::new(Kind::Webhook, webhook.id);
        by.record(
            &*tx,
            Entry::new(Action::WebhookSecretRotated, target).after(&webhook),
        )
        .await?;
        tx.commit().await?;
        Ok(RotatedSecret {
            id: webhook.id,
            secret: self.secrets.secret(&salt).to_text(),
            previous_until: until,
        })
    }

    /// The endpoint's last attempts, newest first.
    pub async fn log(&self, owner: &Account, id: &str) -> Result<Vec<AttemptView>, ApiError> {
        let id = self.get(owner, id).await?.id;
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "webhooks.log",
                "SELECT d.delivery_id, d.event_id, d.state, e.event_type, a.attempt, \
                        a.attempted_at, a.status, a.latency_ms, a.error \
                 FROM webhook_deliveries d \
                 JOIN webhook_attempts a ON a.delivery_id = d.delivery_id \
                 LEFT JOIN events e ON e.event_id = d.event_id \
                 WHERE d.webhook_id = $1 \
                 ORDER BY a.attempted_at DESC, a.delivery_id DESC, a.attempt DESC LIMIT $2",
                &[&id.0, &LOG_PAGE],
            )
            .await?;
        rows.iter()
            .map(|row| {
                let delivery = DeliveryId(row.try_get("delivery_id")?);
                let event: Option<i64> = row.try_get("event_id")?;
                Ok(AttemptView {
                    delivery_id: delivery,
                    message_id: super::message_id(event, delivery),
                    event_type: row
                        .try_get::<_, Option<String>>("event_type")?
                        .unwrap_or_else(|| TEST_TYPE.to_string()),
                    state: row.try_get("state")?,
                    attempt: row.try_get("attempt")?,
                    attempted_at: row.try_get("attempted_at")?,
                    status: row.try_get("status")?,
                    latency_ms: row.try_get("latency_ms")?,
                    error: row.try_get("error")?,
                })
            })
            .collect()
    }
}
