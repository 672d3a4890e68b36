//! Delivery (D22): turning committed events into deliveries, and sending what is due.
//!
//! - **Dispatch**: one statement, under the lock of the single `webhook_dispatch` row,
//!   queues a delivery of each new event to each enabled endpoint of an active account
//!   of the event's tier subscribed to its type, and moves the cursor. Event ids commit
//!   in order (see `events::outbox`), so the cursor never passes an uncommitted event.
//! - **Claim**: due deliveries are claimed, each claim counting an attempt and leasing
//!   it for [`LEASE`] (four times the longest an attempt can take, [`SEND_TIMEOUT`]):
//!   any number of instances deliver each attempt once; a claim whose instance died
//!   lapses and is taken again (at least once, never lost). Claims are made one at a
//!   time across instances (a transaction-scoped advisory lock), so an endpoint never
//!   has more than [`PER_ENDPOINT`] attempts in flight (D27).
//! - **Send and record**: the message is signed (Standard Webhooks; during the 24 hours
//!   after a rotation with the new and the old secret), sent through the [`Transport`],
//!   and the attempt recorded with the instant it was sent and how long it took: a 2xx
//!   delivers it; anything else is tried again after [`RETRY_AFTER`] (with jitter)
//!   until the attempts run out, except a test message, attempted once (D27); an
//!   endpoint whose every attempt failed for [`DISABLE_AFTER`] is disabled, and says
//!   why.
//!
//! `pump` runs these so that no attempt waits for another to finish. Sending happens
//! outside any transaction: a slow receiver holds no lock and never slows an import or
//! a query. Nothing here logs a secret or a body.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, SubsecRound, TimeDelta, Utc};
use deadpool_postgres::Pool;
use rand::Rng;
use serde::Serialize;
use tracing::Instrument;

use super::endpoints::TEST_TYPE;
use super::ids::{DeliveryId, WebhookId};
use super::signing::SecretKeeper;
use crate::clock::{Clock, SystemClock};
use crate::db::Traced;
use crate::events::{EventData, EventId};
use crate::metrics::{metrics, DeliveryLabels};
use crate::ApiError;

/// The longest one attempt may take, connection to the answer's last byte: the
/// service's transport gives up then.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a claimed attempt is an instance's alone: four times the longest attempt,
/// so a claim outlives its attempt and the recording after it.
pub const LEASE: Duration = Duration::from_secs(60);
const _: () = assert!(LEASE.as_secs() >= 4 * SEND_TIMEOUT.as_secs());
/// Attempts in flight at once to one endpoint (D27): a slow endpoint holds at most
/// these, never the deliverer.
pub const PER_ENDPOINT: i64 = 4;
/// The advisory lock that makes claims one at a time across instances (`"iqwh"`).
const CLAIM_LOCK: i64 = 0x6971_7768;
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
/// Deliveries one claim takes at most.
pub(super) const BATCH: i64 = 256;
/// How long a delivered or given-up delivery, and its attempts, stay in the log.
pub const KEEP_DELIVERIES: Duration = Duration::from_secs(30 * 24 * 3600);
/// Deliveries one prune statement deletes at most (it repeats until fewer are left).
const PRUNE_BATCH: i64 = 10_000;

/// One attempt made, to be recorded.
pub(super) struct Attempt {
    delivery: DeliveryId,
    webhook: WebhookId,
    attempt: i32,
    /// The claim's lease: the attempt is recorded only while the delivery still
    /// carries it (a lapsed claim taken by another instance is that instance's).
    lease: DateTime<Utc>,
    /// Attempts before a recovery, not counted against the retry schedule.
    recovered_attempts: i32,
    test: bool,
    sent_at: DateTime<Utc>,
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
    lease: Vec<DateTime<Utc>>,
    sent_at: Vec<DateTime<Utc>>,
    status: Vec<Option<i32>>,
    latency: Vec<i32>,
    error: Vec<Option<String>>,
    answer: Vec<Option<String>>,
    state: Vec<&'static str>,
    next: Vec<DateTime<Utc>>,
    ok: Vec<bool>,
    reason: Vec<String>,
}

impl Columns {
    /// Adds `a` as of `now`: its row, and its delivery's next state (done, due again
    /// after its wait, or given up; a test message is never tried again), counted in
    /// the delivery metrics.
    fn push(&mut self, a: &Attempt, now: DateTime<Utc>) {
        let retry = usize::try_from(a.attempt - a.recovered_attempts - 1)
            .ok()
            .and_then(|i| RETRY_AFTER.get(i))
            .filter(|_| !a.test);
        let (state, next, outcome) = match (a.ok, retry) {
            (true, _) => ("delivered", now, "delivered"),
            (false, Some(wait)) => ("pending", now + jittered(*wait), "retrying"),
            (false, None) => ("failed", now, "failed"),
        };
        metrics()
            .webhook_deliveries
            .get_or_create(&DeliveryLabels { outcome })
            .inc();
        self.delivery.push(a.delivery.0);
        self.webhook.push(a.webhook.0);
        self.attempt.push(a.attempt);
        self.lease.push(a.lease);
        self.sent_at.push(a.sent_at);
        self.status.push(a.answered.status.map(i32::from));
        self.latency.push(a.latency_ms);
        self.error.push(a.answered.error.clone());
        self.answer.push(a.answered.body.clone());
        self.state.push(state);
        self.next.push(next);
        self.ok.push(a.ok);
        self.reason.push(format!(
            "every attempt failed for five days; the last: {}",
            match (a.answered.status, &a.answered.error) {
                (Some(status), _) => format!("HTTP {status}"),
                (None, Some(error)) => error.clone(),
                (None, None) => "no answer".to_string(),
            }
        ));
    }
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
pub(super) struct Claimed {
    delivery: DeliveryId,
    webhook: WebhookId,
    attempt: i32,
    lease: DateTime<Utc>,
    recovered_attempts: i32,
    url: String,
    salt: Vec<u8>,
    /// The salt before a rotation, while it still signs (24 hours).
    previous_salt: Option<Vec<u8>>,
    message_id: String,
    test: bool,
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

    /// Claims at most `room` due attempts (at most [`BATCH`]), no endpoint's
    /// beyond [`PER_ENDPOINT`] in flight, oldest due first. Under the claim lock, so
    /// the count of an endpoint's attempts in flight is exact across instances; rows
    /// another transaction holds (a replay, say) are skipped.
    pub(super) async fn claim(&self, room: usize) -> Result<Vec<Claimed>, ApiError> {
        let now = self.clock.now();
        // In whole microseconds, as the database keeps it: the recording matches it.
        let lease_end = (now + TimeDelta::from_std(LEASE).unwrap_or_default()).trunc_subsecs(6);
        let limit = i64::try_from(room).unwrap_or(BATCH).min(BATCH);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute_named(
            "webhooks.claim_lock",
            "SELECT pg_advisory_xact_lock($1)",
            &[&CLAIM_LOCK],
        )
        .await?;
        let rows = tx
            .query_named(
                "webhooks.claim",
                "WITH busy AS (\
                   SELECT webhook_id, count(*) AS n FROM webhook_deliveries \
                   WHERE state = 'pending' AND locked_until IS NOT NULL AND locked_until > $1 \
                   GROUP BY webhook_id), \
                 ranked AS (\
                   SELECT d.delivery_id, coalesce(b.n, 0) + row_number() OVER (\
                            PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.delivery_id\
                          ) AS place \
                   FROM webhook_deliveries d \
                   JOIN webhooks w ON w.webhook_id = d.webhook_id AND w.disabled_at IS NULL \
                   LEFT JOIN busy b ON b.webhook_id = d.webhook_id \
                   WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
                     AND (d.locked_until IS NULL OR d.locked_until <= $1)), \
                 due AS (\
                   SELECT d.delivery_id FROM webhook_deliveries d \
                   WHERE d.delivery_id IN (SELECT delivery_id FROM ranked WHERE place <= $4) \
                     AND d.state = 'pending' AND d.next_attempt_at <= $1 \
                     AND (d.locked_until IS NULL OR d.locked_until <= $1) \
                   ORDER BY d.next_attempt_at, d.delivery_id LIMIT $3 \
                   FOR UPDATE OF d SKIP LOCKED), \
                 claimed AS (\
                   UPDATE webhook_deliveries d SET attempts = d.attempts + 1, locked_until = $2 \
                   FROM due WHERE d.delivery_id = due.delivery_id \
                   RETURNING d.delivery_id, d.webhook_id, d.event_id, d.attempts, d.created_at, \
                             d.recovered_attempts) \
                 SELECT c.delivery_id, c.webhook_id, c.event_id, c.attempts, c.created_at, \
                        c.recovered_attempts, w.url, w.secret_salt, \
                        CASE WHEN w.previous_until > $1 THEN w.previous_salt END AS previous_salt, \
                        e.event_type, e.created_at AS event_at, \
                        e.index_code, e.trade_dates, e.published_at, e.reason \
                 FROM claimed c JOIN webhooks w ON w.webhook_id = c.webhook_id \
                 LEFT JOIN events e ON e.event_id = c.event_id",
                &[&now, &lease_end, &limit, &PER_ENDPOINT],
            )
            .await?;
        tx.commit().await?;
        rows.iter().map(|row| claimed(row, lease_end)).collect()
    }

    /// Sends one claimed attempt, in a span named for its event (the message id).
    pub(super) async fn send(&self, claimed: Claimed) -> Attempt {
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
            let sent_at = self.clock.now();
            let sign = |salt: &[u8]| {
                self.secrets
                    .secret(salt)
                    .sign(&claimed.message_id, timestamp, &claimed.body)
            };
            // New first, then the old one while it still signs (D27): Standard
            // Webhooks' receivers accept a message when any one signature verifies.
            let mut signature = sign(&claimed.salt);
            if let Some(previous) = &claimed.previous_salt {
                signature.push(' ');
                signature.push_str(&sign(previous));
            }
            let headers = vec![
                ("webhook-id", claimed.message_id.clone()),
                ("webhook-timestamp", timestamp.to_string()),
                ("webhook-signature", signature),
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
                lease: claimed.lease,
                recovered_attempts: claimed.recovered_attempts,
                test: claimed.test,
                sent_at,
                answered,
                ok,
                latency_ms: i32::try_from(latency.as_millis()).unwrap_or(i32::MAX),
            }
        }
        .instrument(span)
        .await
    }

    /// Records a batch of attempts: each attempt's row (when it was sent, how long it
    /// took), its delivery's next state (done, due again after its wait, or given up;
    /// a test message is never tried again), and each endpoint's failure streak
    /// (cleared by a success; five days of it disable the endpoint, saying why). A
    /// delivery whose lease lapsed and was claimed again keeps the newer claim's state.
    pub(super) async fn record(&self, attempts: &[Attempt]) -> Result<(), ApiError> {
        let now = self.clock.now();
        let mut columns = Columns::default();
        for attempt in attempts {
            columns.push(attempt, now);
        }
        let disable_before = now - TimeDelta::from_std(DISABLE_AFTER).unwrap_or_default();
        let client = self.pool.get().await?;
        client
            .execute_named(
                "webhooks.record",
                "WITH r AS (\
                   SELECT * FROM UNNEST($2::bigint[], $3::bigint[], $4::int[], $5::int[], \
                                        $6::int[], $7::text[], $8::text[], $9::text[], \
                                        $10::timestamptz[], $11::bool[], $12::text[], \
                                        $14::timestamptz[], $15::timestamptz[]) \
                     AS r(delivery, webhook, attempt, status, latency, error, answer, state, \
                          next, ok, reason, lease, sent_at)), \
                 attempt AS (\
                   INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status, \
                                                 latency_ms, error, answer) \
                   SELECT delivery, attempt, sent_at, status, latency, error, answer FROM r \
                   ON CONFLICT DO NOTHING), \
                 delivery AS (\
                   UPDATE webhook_deliveries d SET state = r.state, next_attempt_at = r.next, \
                          locked_until = NULL, \
                          delivered_at = CASE WHEN r.ok THEN r.sent_at ELSE d.delivered_at END \
                   FROM r WHERE d.delivery_id = r.delivery AND d.locked_until = r.lease), \
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
                    &columns.lease,
                    &columns.sent_at,
                ],
            )
            .await?;
        Ok(())
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
    pub(super) async fn measure_backlog(&self) -> Result<(), ApiError> {
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

fn claimed(row: &tokio_postgres::Row, lease: DateTime<Utc>) -> Result<Claimed, ApiError> {
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
        lease,
        recovered_attempts: row.try_get("recovered_attempts")?,
        url: row.try_get("url")?,
        salt: row.try_get("secret_salt")?,
        previous_salt: row.try_get("previous_salt")?,
        message_id: super::message_id(event, delivery),
        test: event.is_none(),
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
