//! A member's webhook endpoints (D22): register (the secret shown once), list, delete,
//! send a test message, read the delivery log, replay one delivery. Someone else's
//! endpoint or delivery is 404, never 403, so ids cannot be probed. An account holds at
//! most its tier's `max_webhooks`.
//!
//! It writes endpoints and queues deliveries; it never sends anything (`delivery` does)
//! and never stores or logs a secret.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use serde::{Deserialize, Serialize};

use super::destination::check_url;
use super::ids::{DeliveryId, WebhookId};
use super::signing::SecretKeeper;
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::Account;
use crate::clock::Clock;
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// The event types an endpoint may subscribe to.
pub const EVENT_TYPES: [&str; 2] = ["index.published", "index.revised"];
/// The type of a test message.
pub const TEST_TYPE: &str = "webhook.test";
/// Deliveries a log page shows.
pub const LOG_PAGE: i64 = 100;

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

fn not_found(what: &str) -> ApiError {
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
    /// longest), at most [`ADMIN_LIST`]; for the back office.
    pub async fn all(&self) -> Result<Vec<OwnedWebhookView>, ApiError> {
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "webhooks.all",
                &format!(
                    "SELECT {VIEW}, u.user_id, u.username, u.role, \
                            d.pending, d.failed, a.attempted_at, a.status, a.error \
                     FROM webhooks w JOIN users u ON u.user_id = w.user_id \
                     CROSS JOIN LATERAL (\
                       SELECT count(*) FILTER (WHERE state = 'pending') AS pending, \
                              count(*) FILTER (WHERE state = 'failed') AS failed \
                       FROM webhook_deliveries WHERE webhook_id = w.webhook_id) d \
                     LEFT JOIN LATERAL (\
                       SELECT t.attempted_at, t.status, t.error FROM webhook_attempts t \
                       JOIN webhook_deliveries x ON x.delivery_id = t.delivery_id \
                       WHERE x.webhook_id = w.webhook_id \
                       ORDER BY t.attempted_at DESC LIMIT 1) a ON true \
                     ORDER BY w.disabled_at IS NULL, w.failing_since IS NULL, \
                              w.failing_since, w.webhook_id DESC \
                     LIMIT $1"
                ),
                &[&ADMIN_LIST],
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

    /// Queues a `webhook.test` message to the endpoint, due now.
    pub async fn test(&self, owner: &Account, id: &str) -> Result<Queued, ApiError> {
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let client = self.pool.get().await?;
        let row = client
            .query_opt_named(
                "webhooks.test",
                "INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at, created_at) \
                 SELECT w.webhook_id, NULL, $3, $3 FROM webhooks w \
                 WHERE w.webhook_id = $1 AND w.user_id = $2 \
                 RETURNING delivery_id",
                &[&id.0, &owner.user_id, &self.clock.now()],
            )
            .await?
            .ok_or_else(|| not_found("webhook"))?;
        Ok(Queued {
            delivery_id: DeliveryId(row.try_get(0)?),
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

    /// Sends one delivery again, now, with the same `webhook-id`: a delivered or failed
    /// one once more, one waiting for its next attempt at once. One being sent right now
    /// is refused.
    pub async fn replay(
        &self,
        owner: &Account,
        id: &str,
        delivery: &str,
    ) -> Result<Queued, ApiError> {
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let delivery = DeliveryId::parse(delivery).ok_or_else(|| not_found("delivery"))?;
        let client = self.pool.get().await?;
        let replayed = client
            .execute_named(
                "webhooks.replay",
                "UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = $4, \
                        delivered_at = NULL \
                 FROM webhooks w \
                 WHERE d.delivery_id = $3 AND d.webhook_id = $1 AND w.webhook_id = d.webhook_id \
                   AND w.user_id = $2 \
                   AND (d.locked_until IS NULL OR d.locked_until <= $4)",
                &[&id.0, &owner.user_id, &delivery.0, &self.clock.now()],
            )
            .await?;
        if replayed == 0 {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                "no such delivery, or it is being sent right now",
            ));
        }
        Ok(Queued {
            delivery_id: delivery,
        })
    }
}
