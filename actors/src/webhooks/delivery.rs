//! Delivery (D22): turning committed events into deliveries, and sending what is due.
//!
//! - **Dispatch**: one statement, under the lock of the single `webhook_dispatch` row,
//!   queues a delivery of each new event to each enabled endpoint of an active account
//!   of the event's tier subscribed to its type, and moves the cursor. Event ids commit
//!   in order (see `events::outbox`), so the cursor never passes an uncommitted event.
//! - **Claim**: due deliveries are claimed with `FOR UPDATE SKIP LOCKED`, each claim
//!   counting an attempt and leasing it for [`LEASE`]: any number of instances deliver
//!   each attempt once; a claim whose instance died lapses and is taken again (at least
//!   once, never lost).
//! - **Send and record**: the message is signed (Standard Webhooks), sent through the
//!   [`Transport`], and the attempt recorded: a 2xx delivers it; anything else is tried
//!   again after [`RETRY_AFTER`] (with jitter) until the attempts run out; an endpoint
//!   whose every attempt failed for [`DISABLE_AFTER`] is disabled, and says why.
//!
//! Sending happens outside any transaction: a slow receiver holds no lock and never
//! slows an import or a query. Nothing here logs a secret or a body.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use deadpool_postgres::Pool;
use futures_util::stream::{self, StreamExt};
use rand::Rng;
use serde::Serialize;
use tokio::sync::watch;
use tracing::Instrument;

use super::endpoints::TEST_TYPE;
use super::ids::{DeliveryId, WebhookId};
use super::signing::SecretKeeper;
use crate::clock::{Clock, SystemClock};
use crate::db::Traced;
use crate::events::{EventData, EventId};
use crate::metrics::{metrics, DeliveryLabels};
use crate::ApiError;

/// How long a claimed attempt is an instance's alone: longer than the send timeout.
pub const LEASE: Duration = Duration::from_secs(60);
/// The waits before the 2nd, 3rd, ... attempt; after the last, the delivery fails.
pub const RETRY_AFTER: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];
/// An endpoint failing every attempt this long is disabled.
pub const DISABLE_AFTER: Duration = Duration::from_secs(5 * 24 * 3600);
/// Deliveries claimed at once, and sent at once.
const BATCH: i64 = 256;
const IN_FLIGHT: usize = 64;
/// How often the deliverer looks for due retries when nothing wakes it.
const TICK: Duration = Duration::from_secs(1);
/// Every this many ticks it dispatches even unwoken, and it measures the backlog three
/// times as often.
const SWEEP: u64 = 30;
/// Every this many ticks (an hour) it deletes finished deliveries older than
/// [`KEEP_DELIVERIES`], so the log stays the size of a month.
const PRUNE: u64 = 3600;
/// How long a delivered or given-up delivery, and its attempts, stay in the log.
pub const KEEP_DELIVERIES: Duration = Duration::from_secs(30 * 24 * 3600);
/// Deliveries one prune statement deletes at most (it repeats until fewer are left).
const PRUNE_BATCH: i64 = 10_000;

/// One attempt made, to be recorded.
struct Attempt {
    delivery: DeliveryId,
    webhook: WebhookId,
    attempt: i32,
    answered: Answered,
    ok: bool,
    latency_ms: i32,
}

/// A batch of attempts as the recording statement's arrays.
#[derive(Default)]
struct Columns {
    delivery: Vec<i64>,
    webhook: Vec<i64>,
    attempt: Vec<i32>,
    status: Vec<Option<i32>>,
    latency: Vec<i32>,
    error: Vec<Option<String>>,
    answer: Vec<Option<String>>,
    state: Vec<&'static str>,
    next: Vec<DateTime<Utc>>,
    ok: Vec<bool>,
    reason: Vec<String>,
}

/// What a receiver answered (or why nothing came).
#[derive(Debug, Clone, Default)]
pub struct Answered {
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    /// Why no answer came, or why it was not sent (a private address, say).
    pub error: Option<String>,
    /// The first KiB of the answer's body, as text.
    pub body: Option<String>,
}

/// Sends a signed message: an HTTP `POST` with these headers and body. The service
/// provides it (redirects not followed, public addresses only, a timeout).
pub trait Transport: Send + Sync {
    fn post(
        &self,
        url: String,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    ) -> Pin<Box<dyn Future<Output = Answered> + Send>>;
}

/// The body of a message: D22's `{type, timestamp, data}`.
#[derive(Serialize)]
struct Message<'a, D: Serialize> {
    #[serde(rename = "type")]
    event_type: &'a str,
    timestamp: DateTime<Utc>,
    data: D,
}

#[derive(Serialize)]
struct TestData {
    webhook_id: WebhookId,
}

/// A claimed attempt, with what it needs to be sent.
struct Claimed {
    delivery: DeliveryId,
    webhook: WebhookId,
    attempt: i32,
    url: String,
    salt: Vec<u8>,
    message_id: String,
    body: Vec<u8>,
}

#[derive(Clone)]
pub struct Deliverer {
    pub pool: Pool,
    pub clock: Arc<dyn Clock>,
    pub secrets: SecretKeeper,
    pub transport: Arc<dyn Transport>,
}

impl Deliverer {
    /// Queues the deliveries of the events committed since the last dispatch.
    pub async fn dispatch(&self) -> Result<u64, ApiError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let row = tx
            .query_one_named(
                "webhooks.dispatch",
                "WITH cursor AS (SELECT last_event_id FROM webhook_dispatch FOR UPDATE), \
                 new AS (SELECT e.event_id, e.tier, e.event_type FROM events e, cursor c \
                         WHERE e.event_id > c.last_event_id ORDER BY e.event_id LIMIT 10000), \
                 queued AS (\
                   INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at, \
                                                   created_at) \
                   SELECT w.webhook_id, n.event_id, $1, $1 \
                   FROM new n \
                   JOIN users u ON u.tier = n.tier AND u.active \
                   JOIN webhooks w ON w.user_id = u.user_id AND w.disabled_at IS NULL \
                                  AND n.event_type = ANY (w.event_types) \
                   ORDER BY n.event_id, w.webhook_id \
                   RETURNING 1), \
                 moved AS (UPDATE webhook_dispatch SET last_event_id = m.last \
                           FROM (SELECT max(event_id) AS last FROM new) m \
                           WHERE m.last IS NOT NULL RETURNING 1) \
                 SELECT (SELECT count(*) FROM queued), (SELECT count(*) FROM moved)",
                &[&self.clock.now()],
            )
            .await?;
        tx.commit().await?;
        Ok(u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0))
    }

    /// Claims due attempts, sends them, records them; until none is due. Answers how
    /// many were sent. A batch's attempts are recorded together, in one statement: a
    /// commit per attempt would bound delivery by the database's commit rate.
    pub async fn deliver_due(&self) -> Result<usize, ApiError> {
        let mut sent = 0;
        loop {
            let claimed = self.claim().await?;
            let count = claimed.len();
            let attempts: Vec<Attempt> = stream::iter(claimed)
                .map(|claimed| self.send(claimed))
                .buffer_unordered(IN_FLIGHT)
                .collect()
                .await;
            if !attempts.is_empty() {
                self.record(&attempts).await?;
            }
            sent += count;
            if i64::try_from(count).unwrap_or(0) < BATCH {
                return Ok(sent);
            }
        }
    }

    async fn claim(&self) -> Result<Vec<Claimed>, ApiError> {
        let now = self.clock.now();
        let lease_end = now + TimeDelta::from_std(LEASE).unwrap_or_default();
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "webhooks.claim",
                "WITH due AS (\
                   SELECT d.delivery_id FROM webhook_deliveries d \
                   JOIN webhooks w ON w.webhook_id = d.webhook_id AND w.disabled_at IS NULL \
                   WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
                     AND (d.locked_until IS NULL OR d.locked_until <= $1) \
                   ORDER BY d.next_attempt_at LIMIT $3 \
                   FOR UPDATE OF d SKIP LOCKED), \
                 claimed AS (\
                   UPDATE webhook_deliveries d SET attempts = d.attempts + 1, locked_until = $2 \
                   FROM due WHERE d.delivery_id = due.delivery_id \
                   RETURNING d.delivery_id, d.webhook_id, d.event_id, d.attempts, d.created_at) \
                 SELECT c.delivery_id, c.webhook_id, c.event_id, c.attempts, c.created_at, \
                        w.url, w.secret_salt, e.event_type, e.created_at AS event_at, \
                        e.index_code, e.trade_dates, e.published_at, e.reason \
                 FROM claimed c JOIN webhooks w ON w.webhook_id = c.webhook_id \
                 LEFT JOIN events e ON e.event_id = c.event_id",
                &[&now, &lease_end, &BATCH],
            )
            .await?;
        rows.iter().map(claimed).collect()
    }

    /// Sends one claimed attempt, in a span named for its event (the message id).
    async fn send(&self, claimed: Claimed) -> Attempt {
        let span = tracing::info_span!(
            "webhook.deliver",
            webhook.id = %claimed.webhook,
            webhook.message_id = %claimed.message_id,
            webhook.attempt = claimed.attempt,
            http.response.status_code = tracing::field::Empty,
        );
        async move {
            // Receivers check the timestamp against their own clock (Standard Webhooks
            // allows five minutes), so it is the real time, not the service's clock.
            let timestamp = SystemClock.now().timestamp();
            let secret = self.secrets.secret(&claimed.salt);
            let headers = vec![
                ("webhook-id", claimed.message_id.clone()),
                ("webhook-timestamp", timestamp.to_string()),
                (
                    "webhook-signature",
                    secret.sign(&claimed.message_id, timestamp, &claimed.body),
                ),
                ("content-type", "application/json".to_string()),
            ];
            let started = Instant::now();
            let answered = self
                .transport
                .post(claimed.url.clone(), headers, claimed.body.clone())
                .await;
            let latency = started.elapsed();
            let ok = answered.status.is_some_and(|s| (200..300).contains(&s));
            if let Some(status) = answered.status {
                tracing::Span::current().record("http.response.status_code", status);
            }
            if !ok {
                tracing::warn!(
                    status = answered.status,
                    error = answered.error.as_deref().unwrap_or(""),
                    "webhook attempt failed"
                );
            }
            Attempt {
                delivery: claimed.delivery,
                webhook: claimed.webhook,
                attempt: claimed.attempt,
                answered,
                ok,
                latency_ms: i32::try_from(latency.as_millis()).unwrap_or(i32::MAX),
            }
        }
        .instrument(span)
        .await
    }

    /// Records a batch of attempts: each attempt's row, its delivery's next state (done,
    /// due again after its wait, or given up), and each endpoint's failure streak
    /// (cleared by a success; five days of it disable the endpoint, saying why).
    async fn record(&self, attempts: &[Attempt]) -> Result<(), ApiError> {
        let now = self.clock.now();
        let mut columns = Columns::default();
        for a in attempts {
            let retry = usize::try_from(a.attempt - 1)
                .ok()
                .and_then(|i| RETRY_AFTER.get(i));
            let (state, next, outcome) = match (a.ok, retry) {
                (true, _) => ("delivered", now, "delivered"),
                (false, Some(wait)) => ("pending", now + jittered(*wait), "retrying"),
                (false, None) => ("failed", now, "failed"),
            };
            metrics()
                .webhook_deliveries
                .get_or_create(&DeliveryLabels { outcome })
                .inc();
            columns.delivery.push(a.delivery.0);
            columns.webhook.push(a.webhook.0);
            columns.attempt.push(a.attempt);
            columns.status.push(a.answered.status.map(i32::from));
            columns.latency.push(a.latency_ms);
            columns.error.push(a.answered.error.clone());
            columns.answer.push(a.answered.body.clone());
            columns.state.push(state);
            columns.next.push(next);
            columns.ok.push(a.ok);
            columns.reason.push(format!(
                "every attempt failed for five days; the last: {}",
                match (a.answered.status, &a.answered.error) {
                    (Some(status), _) => format!("HTTP {status}"),
                    (None, Some(error)) => error.clone(),
                    (None, None) => "no answer".to_string(),
                }
            ));
        }
        let disable_before = now - TimeDelta::from_std(DISABLE_AFTER).unwrap_or_default();
        let client = self.pool.get().await?;
        client
            .execute_named(
                "webhooks.record",
                "WITH r AS (\
                   SELECT * FROM UNNEST($2::bigint[], $3::bigint[], $4::int[], $5::int[], \
                                        $6::int[], $7::text[], $8::text[], $9::text[], \
                                        $10::timestamptz[], $11::bool[], $12::text[]) \
                     AS r(delivery, webhook, attempt, status, latency, error, answer, state, \
                          next, ok, reason)), \
                 attempt AS (\
                   INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status, \
                                                 latency_ms, error, answer) \
                   SELECT delivery, attempt, $1, status, latency, error, answer FROM r \
                   ON CONFLICT DO NOTHING), \
                 delivery AS (\
                   UPDATE webhook_deliveries d SET state = r.state, next_attempt_at = r.next, \
                          locked_until = NULL, \
                          delivered_at = CASE WHEN r.ok THEN $1 ELSE d.delivered_at END \
                   FROM r WHERE d.delivery_id = r.delivery), \
                 streak AS (\
                   SELECT webhook, bool_or(ok) AS any_ok, max(reason) AS reason \
                   FROM r GROUP BY webhook) \
                 UPDATE webhooks w SET \
                   failing_since = CASE WHEN s.any_ok THEN NULL \
                                        ELSE coalesce(w.failing_since, $1) END, \
                   disabled_at = CASE WHEN NOT s.any_ok AND coalesce(w.failing_since, $1) <= $13 \
                                      THEN $1 ELSE w.disabled_at END, \
                   disabled_reason = CASE WHEN NOT s.any_ok \
                                           AND coalesce(w.failing_since, $1) <= $13 \
                                          THEN s.reason ELSE w.disabled_reason END \
                 FROM streak s WHERE w.webhook_id = s.webhook",
                &[
                    &now,
                    &columns.delivery,
                    &columns.webhook,
                    &columns.attempt,
                    &columns.status,
                    &columns.latency,
                    &columns.error,
                    &columns.answer,
                    &columns.state,
                    &columns.next,
                    &columns.ok,
                    &columns.reason,
                    &disable_before,
                ],
            )
            .await?;
        Ok(())
    }

    /// Dispatches and delivers until the bus stops. Events are only ever written with
    /// an announcement on the bus, so it dispatches when `signal` moves (and every
    /// [`SWEEP`] ticks, should an announcement be lost); it claims what is due every
    /// tick, since retries come due with time alone.
    pub async fn run(self, mut signal: watch::Receiver<u64>, mut stopping: watch::Receiver<bool>) {
        let mut interval = tokio::time::interval(TICK);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ticks: u64 = 0;
        loop {
            let announced = tokio::select! {
                _ = interval.tick() => false,
                _ = signal.changed() => true,
                _ = stopping.wait_for(|stop| *stop) => return,
            };
            if announced || ticks % SWEEP == 0 {
                if let Err(error) = self.dispatch().await {
                    tracing::warn!(%error, "cannot queue webhook deliveries");
                    continue;
                }
            }
            if let Err(error) = self.deliver_due().await {
                tracing::warn!(%error, "cannot deliver webhooks");
            }
            if ticks % (SWEEP / 3) == 0 {
                if let Err(error) = self.measure_backlog().await {
                    tracing::warn!(%error, "cannot measure the webhook backlog");
                }
            }
            if ticks % PRUNE == PRUNE / 2 {
                if let Err(error) = self.prune().await {
                    tracing::warn!(%error, "cannot prune the webhook delivery log");
                }
            }
            ticks += 1;
        }
    }

    /// Deletes delivered and given-up deliveries (their attempts with them) older than
    /// [`KEEP_DELIVERIES`], a batch at a time; answers how many.
    pub async fn prune(&self) -> Result<u64, ApiError> {
        let before = self.clock.now() - TimeDelta::from_std(KEEP_DELIVERIES).unwrap_or_default();
        let client = self.pool.get().await?;
        let mut pruned = 0;
        loop {
            let deleted = client
                .execute_named(
                    "webhooks.prune",
                    "DELETE FROM webhook_deliveries WHERE delivery_id IN (\
                       SELECT delivery_id FROM webhook_deliveries \
                       WHERE state <> 'pending' AND created_at < $1 LIMIT $2)",
                    &[&before, &PRUNE_BATCH],
                )
                .await?;
            pruned += deleted;
            if deleted < PRUNE_BATCH as u64 {
                return Ok(pruned);
            }
        }
    }

    /// Sets the backlog's gauges: retries waiting, and the age of the oldest event (or
    /// test message) not yet delivered to one of its endpoints (what grows when
    /// receivers fail or delivery stalls).
    async fn measure_backlog(&self) -> Result<(), ApiError> {
        let client = self.pool.get().await?;
        let row = client
            .query_one_named(
                "webhooks.backlog",
                "SELECT count(*) FILTER (WHERE d.attempts > 0), \
                        min(coalesce(e.created_at, d.created_at)) \
                 FROM webhook_deliveries d LEFT JOIN events e ON e.event_id = d.event_id \
                 WHERE d.state = 'pending'",
                &[],
            )
            .await?;
        let waiting: i64 = row.try_get(0)?;
        let oldest: Option<DateTime<Utc>> = row.try_get(1)?;
        let age = oldest.map_or(0, |at| (self.clock.now() - at).num_seconds().max(0));
        metrics().webhook_retries_waiting.set(waiting);
        metrics().webhook_oldest_pending.set(age);
        Ok(())
    }
}

fn jittered(wait: Duration) -> TimeDelta {
    let factor = rand::thread_rng().gen_range(0.9..1.1);
    TimeDelta::from_std(wait.mul_f64(factor)).unwrap_or_default()
}

fn claimed(row: &tokio_postgres::Row) -> Result<Claimed, ApiError> {
    let delivery = DeliveryId(row.try_get("delivery_id")?);
    let webhook = WebhookId(row.try_get("webhook_id")?);
    let event: Option<i64> = row.try_get("event_id")?;
    let queued: DateTime<Utc> = row.try_get("created_at")?;
    let body = match event {
        Some(_) => {
            let at: DateTime<Utc> = row.try_get("event_at")?;
            let event_type: String = row.try_get("event_type")?;
            let message = Message {
                event_type: &event_type,
                timestamp: at,
                data: EventData::from_row(row)?,
            };
            serde_json::to_vec(&message)
        }
        None => {
            let message = Message {
                event_type: TEST_TYPE,
                timestamp: queued,
                data: TestData {
                    webhook_id: webhook,
                },
            };
            serde_json::to_vec(&message)
        }
    };
    Ok(Claimed {
        delivery,
        webhook,
        attempt: row.try_get("attempts")?,
        url: row.try_get("url")?,
        salt: row.try_get("secret_salt")?,
        message_id: super::message_id(event, delivery),
        body: body.map_err(ApiError::internal)?,
    })
}

/// The `webhook-id` of a delivery: its event's id, or `test_` and the delivery's number.
pub fn message_id(event: Option<i64>, delivery: DeliveryId) -> String {
    match event {
        Some(id) => EventId(id).to_string(),
        None => format!("test_{}", delivery.0),
    }
}
