//! What a member asks to be sent (again) to one of their endpoints (D22, D27): a test
//! message (at most [`TESTS_PER_MINUTE`] an account, attempted once), one delivery
//! replayed, or every failed delivery since an instant recovered after an outage on
//! the receiver's side. Someone else's endpoint or delivery is 404.
//!
//! It only queues; `delivery` sends. It never touches a delivery being sent (its lease
//! not yet lapsed).

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::endpoints::{not_found, Queued, Webhooks};
use super::ids::{DeliveryId, WebhookId};
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::Account;
use crate::db::Traced;
use crate::wire_date::timestamp;
use crate::{ApiError, ErrorCode};

/// Test messages an account may queue a minute (D27), across its endpoints.
pub const TESTS_PER_MINUTE: i64 = 5;
/// How far back a recovery may reach (D27).
pub const RECOVER_WITHIN: Duration = Duration::from_secs(7 * 24 * 3600);

/// `POST /api/v1/webhooks/{id}/recover`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Recover {
    /// RFC 3339 with an offset, at most 7 days back: the failed deliveries of events
    /// since then are sent again
    #[cfg_attr(feature = "openapi", schema(example = "2026-11-19T00:00:00Z"))]
    pub since: String,
}

/// What a recovery queued.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Recovered {
    /// deliveries queued again
    pub requeued: i64,
}

impl Webhooks {
    /// Queues a `webhook.test` message to the endpoint, due now; the sixth of an
    /// account within a minute is 429 / 42901 with the seconds until one may be sent.
    /// The owner's row is locked while counting, so two at once cannot both take the
    /// fifth place (and every instance counts the same log).
    pub async fn test(&self, owner: &Account, id: &str) -> Result<Queued, ApiError> {
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let now = self.clock.now();
        let minute_ago = now - TimeDelta::minutes(1);
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let row = tx
            .query_one_named(
                "webhooks.tests_this_minute",
                "WITH owner AS (SELECT user_id FROM users WHERE user_id = $1 FOR UPDATE) \
                 SELECT count(d.*), min(d.created_at) FROM owner o \
                 JOIN webhooks w ON w.user_id = o.user_id \
                 JOIN webhook_deliveries d ON d.webhook_id = w.webhook_id \
                      AND d.event_id IS NULL AND d.created_at > $2",
                &[&owner.user_id, &minute_ago],
            )
            .await?;
        let (sent, oldest): (i64, Option<DateTime<Utc>>) = (row.try_get(0)?, row.try_get(1)?);
        if sent >= TESTS_PER_MINUTE {
            let free_at = oldest.unwrap_or(now) + TimeDelta::minutes(1);
            let seconds = (free_at - now).num_milliseconds().div_euclid(1000) + 1;
            return Err(ApiError::limited(
                format!(
                    "at most {TESTS_PER_MINUTE} test messages a minute for an account: try \
                     again in {seconds} s"
                ),
                seconds,
            ));
        }
        let row = tx
            .query_opt_named(
                "webhooks.test",
                "INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at, created_at) \
                 SELECT w.webhook_id, NULL, $3, $3 FROM webhooks w \
                 WHERE w.webhook_id = $1 AND w.user_id = $2 \
                 RETURNING delivery_id",
                &[&id.0, &owner.user_id, &now],
            )
            .await?
            .ok_or_else(|| not_found("webhook"))?;
        tx.commit().await?;
        Ok(Queued {
            delivery_id: DeliveryId(row.try_get(0)?),
        })
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

    /// Queues again every failed delivery of an event since `since` (at most
    /// [`RECOVER_WITHIN`] back) and, when the endpoint was disabled, those it left
    /// waiting (abandoned), each due now with a fresh retry schedule; enables the
    /// endpoint and clears its failure streak. Test messages are not
    /// recovered. Answers how many were queued.
    pub async fn recover(
        &self,
        by: &Author,
        id: &str,
        recover: Recover,
    ) -> Result<Recovered, ApiError> {
        let owner = by.owner()?;
        let id = WebhookId::parse(id).ok_or_else(|| not_found("webhook"))?;
        let now = self.clock.now();
        let since = timestamp::parse(&recover.since)
            .map_err(|why| ApiError::invalid(format!("field 'since' {why}")))?;
        let earliest = now - TimeDelta::from_std(RECOVER_WITHIN).unwrap_or_default();
        if since < earliest || since > now {
            return Err(ApiError::invalid(format!(
                "field 'since' must lie within the last 7 days: from {} to now",
                earliest.format("%Y-%m-%dT%H:%M:%SZ")
            )));
        }
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let row = tx
            .query_opt_named(
                "webhooks.recover",
                "WITH old AS (\
                   SELECT webhook_id, disabled_at IS NOT NULL AS was_disabled FROM webhooks \
                   WHERE webhook_id = $1 AND user_id = $2 FOR UPDATE), \
                 w AS (\
                   UPDATE webhooks x SET disabled_at = NULL, disabled_reason = NULL, \
                          failing_since = NULL \
                   FROM old WHERE x.webhook_id = old.webhook_id \
                   RETURNING x.webhook_id, old.was_disabled), \
                 requeued AS (\
                   UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = $4, \
                          recovered_attempts = d.attempts \
                   FROM w WHERE d.webhook_id = w.webhook_id AND d.event_id IS NOT NULL \
                     AND d.created_at >= $3 \
                     AND (d.state = 'failed' OR (w.was_disabled AND d.state = 'pending')) \
                     AND (d.locked_until IS NULL OR d.locked_until <= $4) \
                   RETURNING 1) \
                 SELECT (SELECT count(*) FROM requeued) FROM w",
                &[&id.0, &owner.user_id, &since, &now],
            )
            .await?
            .ok_or_else(|| not_found("webhook"))?;
        let recovered = Recovered {
            requeued: row.try_get(0)?,
        };
        let target = Target::new(Kind::Webhook, id);
        by.record(
            &*tx,
            Entry::new(Action::WebhookRecovered, target).after(&serde_json::json!({
                "since": since,
                "requeued": recovered.requeued,
            })),
        )
        .await?;
        tx.commit().await?;
        Ok(recovered)
    }
}
