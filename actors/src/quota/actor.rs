//! The QuotaActor: step 7 of the check chain, per-minute and daily key quotas held in
//! memory and leased from Postgres, and the call log.
//!
//! A `Charge` with budget in hand is answered from memory, at once. Without budget, the
//! call waits for one lease statement for its key (calls arriving meanwhile queue behind
//! it, in order), so the database sees one statement per block of calls, not one per
//! call. Spent calls, given-back budget and call records go to the flusher on a timer
//! and at shutdown ([`Drain`]).
//!
//! It must never admit a call from budget it does not hold: that is the whole of the
//! exactness across instances.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use rand::Rng;
use tokio::sync::{mpsc, oneshot};
use tracing::{Instrument, Span};

use crate::metrics::{metrics, WindowLabels};

use super::flusher::{self, Batch, Job};
use super::lease::{Ask, KeyQuota, Limits, Status, Verdict, Window};
use super::store::{CallRecord, QuotaStore, Spent, WindowKey};
use crate::clock::Clock;
use crate::{ApiError, ErrorCode};

/// After a lease statement fails, calls that need one are refused (50000) without
/// trying for this long, so an outage answers fast instead of queueing on timeouts.
const DB_RETRY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub struct QuotaSettings {
    /// How often spent calls and the call log are written.
    pub flush_interval: Duration,
    /// Call-log rows and daily usage older than this many days are deleted.
    pub retention_days: u32,
    /// A key without calls for this long gives its leases back, so other instances can
    /// use them, and leaves this instance's memory.
    pub idle_release: Duration,
}

impl Default for QuotaSettings {
    fn default() -> Self {
        QuotaSettings {
            flush_interval: Duration::from_secs(1),
            retention_days: 90,
            idle_release: Duration::from_secs(10),
        }
    }
}

/// The answer to a [`Charge`]: the headers' status (when known) and the verdict.
#[derive(Debug, Clone)]
pub struct Admission {
    pub status: Option<Status>,
    /// The window that refused, for the 429's headers.
    pub refused: Option<Window>,
    pub result: Result<(), ApiError>,
}

impl Admission {
    fn of(verdict: Verdict) -> Admission {
        match verdict {
            Verdict::Admit(status) => Admission {
                status: Some(status),
                refused: None,
                result: Ok(()),
            },
            Verdict::Refuse(window, status) => Admission {
                status: Some(status),
                refused: Some(window),
                result: Err(match window {
                    Window::Day => ApiError::new(
                        ErrorCode::DailyQuotaExhausted,
                        "daily quota used up; retry the next UTC day",
                    ),
                    Window::Minute => ApiError::new(
                        ErrorCode::RateLimited,
                        "per-minute rate exceeded; back off to the next minute",
                    ),
                }),
            },
            Verdict::Lease => Admission::unavailable(),
        }
    }

    fn unavailable() -> Admission {
        Admission::failed(ApiError::internal("quota store unreachable"))
    }

    /// No verdict: the quota could not be asked.
    pub fn failed(error: impl Into<ApiError>) -> Admission {
        Admission {
            status: None,
            refused: None,
            result: Err(error.into()),
        }
    }
}

/// Step 7 for one key-authenticated query. `count == false` only asks for the status
/// (the query was refused before step 7 and does not count, but carries the headers).
#[derive(Message)]
#[rtype(result = "Admission")]
pub struct Charge {
    pub key_id: String,
    pub limits: Limits,
    pub count: bool,
    pub span: Span,
}

/// A counted call's outcome, for the call log.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Record(pub CallRecord);

/// Shutdown: give every lease back and write everything, waiting at most `timeout`.
#[derive(Message)]
#[rtype(result = "DrainReport")]
pub struct Drain {
    pub timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainReport {
    /// Windows and call records that could not be written (the database was away).
    pub lost_windows: usize,
    pub lost_calls: usize,
}

/// Counters for benchmarks and metrics.
#[derive(Message)]
#[rtype(result = "QuotaStats")]
pub struct ShowStats;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaStats {
    /// Every statement: leases, flushes, prunes.
    pub statements: u64,
    pub leases: u64,
    pub admitted: u64,
    pub refused: u64,
}

struct Waiter {
    limits: Limits,
    count: bool,
    reply: oneshot::Sender<Admission>,
}

struct KeyEntry {
    book: KeyQuota,
    waiting: VecDeque<Waiter>,
    leasing: bool,
    last_call: Instant,
}

pub struct QuotaActor {
    store: QuotaStore,
    clock: Arc<dyn Clock>,
    settings: QuotaSettings,
    instance_id: i64,
    keys: HashMap<String, KeyEntry>,
    /// Spent and given back since the last flush.
    spent: BTreeMap<WindowKey, Spent>,
    calls: Vec<CallRecord>,
    flusher: mpsc::UnboundedSender<Job>,
    flusher_jobs: Option<mpsc::UnboundedReceiver<Job>>,
    db_down_until: Option<Instant>,
    last_prune: Option<NaiveDate>,
    admitted: u64,
    refused: u64,
}

impl QuotaActor {
    pub fn new(store: QuotaStore, clock: Arc<dyn Clock>, settings: QuotaSettings) -> Self {
        let (flusher, jobs) = mpsc::unbounded_channel();
        QuotaActor {
            store,
            clock,
            settings,
            instance_id: rand::thread_rng().gen(),
            keys: HashMap::new(),
            spent: BTreeMap::new(),
            calls: Vec::new(),
            flusher,
            flusher_jobs: Some(jobs),
            db_down_until: None,
            last_prune: None,
            admitted: 0,
            refused: 0,
        }
    }

    fn db_down(&self, mono: Instant) -> bool {
        self.db_down_until.is_some_and(|until| mono < until)
    }

    /// Turns a verdict into the answer, counting what was admitted or refused.
    fn settle(
        &mut self,
        key_id: &str,
        count: bool,
        verdict: Verdict,
        now: DateTime<Utc>,
    ) -> Admission {
        match verdict {
            Verdict::Admit(_) if count => {
                self.admitted += 1;
                let day = (key_id.to_string(), Window::Day, Window::Day.start(now));
                self.spent.entry(day).or_default().used += 1;
            }
            Verdict::Refuse(window, ..) => {
                self.refused += 1;
                metrics()
                    .quota_refusals
                    .get_or_create(&WindowLabels {
                        window: window.as_str(),
                    })
                    .inc();
            }
            _ => {}
        }
        Admission::of(verdict)
    }

    /// Decides the waiters of `key_id` in order until one needs a lease, and starts it.
    fn serve(&mut self, key_id: &str, ctx: &mut Context<Self>) {
        let now = self.clock.now();
        let mono = Instant::now();
        let db_down = self.db_down(mono);
        loop {
            let Some(entry) = self.keys.get_mut(key_id) else {
                return;
            };
            let Some(waiter) = entry.waiting.front() else {
                return;
            };
            let verdict = entry.book.decide(waiter.limits, now, mono, waiter.count);
            if verdict == Verdict::Lease && !db_down {
                if !entry.leasing {
                    let waiting = entry.waiting.iter().filter(|w| w.count).count() as i64;
                    let asks = entry.book.asks(waiting, mono);
                    entry.leasing = true;
                    self.lease(key_id.to_string(), asks, ctx);
                }
                return;
            }
            let Some(waiter) = entry.waiting.pop_front() else {
                return;
            };
            let admission = self.settle(key_id, waiter.count, verdict, now);
            let _ = waiter.reply.send(admission);
        }
    }

    fn lease(&mut self, key_id: String, asks: Vec<Ask>, ctx: &mut Context<Self>) {
        let store = self.store.clone();
        let statement = async move {
            let grants = store.lease(&key_id, &asks).await;
            (key_id, asks, grants)
        };
        ctx.spawn(
            statement
                .into_actor(self)
                .map(|(key_id, asks, grants), act, ctx| {
                    let mono = Instant::now();
                    match grants {
                        Ok(grants) => {
                            act.db_down_until = None;
                            if let Some(entry) = act.keys.get_mut(&key_id) {
                                for (ask, grant) in asks.iter().zip(grants) {
                                    entry.book.granted(ask, grant, mono);
                                }
                            }
                        }
                        Err(err) => {
                            tracing::warn!(error = %err.message, "quota lease failed");
                            act.db_down_until = Some(mono + DB_RETRY);
                        }
                    }
                    if let Some(entry) = act.keys.get_mut(&key_id) {
                        entry.leasing = false;
                    }
                    act.serve(&key_id, ctx);
                }),
        );
    }

    /// Hands the flusher what was spent since the last tick, after giving back the
    /// leases of keys idle for `idle_release` (or of every key, at shutdown).
    fn hand_over(&mut self, release_all: bool) {
        let now = self.clock.now();
        let mono = Instant::now();
        let idle = self.settings.idle_release;
        let mut released = Vec::new();
        self.keys.retain(|key_id, entry| {
            let quiet = entry.waiting.is_empty() && !entry.leasing;
            if quiet && (release_all || mono.duration_since(entry.last_call) >= idle) {
                released.push((key_id.clone(), entry.book.release(now)));
                false
            } else {
                true
            }
        });
        for (key_id, give_backs) in released {
            for give_back in give_backs {
                let window = (key_id.clone(), give_back.window, give_back.start);
                self.spent.entry(window).or_default().returned += give_back.amount;
            }
        }
        let batch = Batch {
            windows: std::mem::take(&mut self.spent),
            calls: std::mem::take(&mut self.calls),
            at: Some(now),
        };
        if !batch.is_empty() {
            let _ = self.flusher.send(Job::Flush(batch));
        }
        let today = now.date_naive();
        if self.last_prune != Some(today) {
            self.last_prune = Some(today);
            let before =
                Window::Day.start(now) - TimeDelta::days(i64::from(self.settings.retention_days));
            let _ = self.flusher.send(Job::Prune { now, before });
        }
    }
}

impl Actor for QuotaActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Some(jobs) = self.flusher_jobs.take() {
            actix::spawn(flusher::run(self.store.clone(), self.instance_id, jobs));
        }
        ctx.run_interval(self.settings.flush_interval, |act, _| act.hand_over(false));
    }
}

impl Handler<Charge> for QuotaActor {
    type Result = Response<Admission>;

    fn handle(&mut self, msg: Charge, ctx: &mut Context<Self>) -> Self::Result {
        let span = tracing::info_span!(parent: &msg.span, "quota.charge");
        let _enter = span.enter();
        let now = self.clock.now();
        let mono = Instant::now();
        let db_down = self.db_down(mono);
        if !self.keys.contains_key(&msg.key_id) {
            let entry = KeyEntry {
                book: KeyQuota::new(msg.limits, now),
                waiting: VecDeque::new(),
                leasing: false,
                last_call: mono,
            };
            self.keys.insert(msg.key_id.clone(), entry);
        }
        let Some(entry) = self.keys.get_mut(&msg.key_id) else {
            return Response::reply(Admission::unavailable());
        };
        entry.last_call = mono;
        // The hot path: nobody queued ahead, and budget in hand (or a verdict without it).
        if entry.waiting.is_empty() {
            let verdict = entry.book.decide(msg.limits, now, mono, msg.count);
            if verdict != Verdict::Lease || db_down {
                return Response::reply(self.settle(&msg.key_id, msg.count, verdict, now));
            }
        }
        let (reply, answer) = oneshot::channel();
        entry.waiting.push_back(Waiter {
            limits: msg.limits,
            count: msg.count,
            reply,
        });
        self.serve(&msg.key_id, ctx);
        Response::fut(
            async move { answer.await.unwrap_or_else(|_| Admission::unavailable()) }
                .instrument(span.clone()),
        )
    }
}

impl Handler<Record> for QuotaActor {
    type Result = ();

    fn handle(&mut self, msg: Record, _: &mut Context<Self>) {
        if self.calls.len() < flusher::MAX_BUFFERED_CALLS {
            self.calls.push(msg.0);
        }
    }
}

impl Handler<Drain> for QuotaActor {
    type Result = ResponseFuture<DrainReport>;

    fn handle(&mut self, msg: Drain, _: &mut Context<Self>) -> Self::Result {
        self.hand_over(true);
        let (done, unsent) = oneshot::channel();
        let deadline = tokio::time::Instant::now() + msg.timeout;
        let _ = self.flusher.send(Job::Drain { deadline, done });
        Box::pin(async move {
            let unsent = unsent.await.unwrap_or_default();
            let report = DrainReport {
                lost_windows: unsent.windows.len(),
                lost_calls: unsent.calls.len(),
            };
            if report
                != (DrainReport {
                    lost_windows: 0,
                    lost_calls: 0,
                })
            {
                tracing::error!(?report, "quota usage could not be written before exit");
            }
            report
        })
    }
}

impl Handler<ShowStats> for QuotaActor {
    type Result = MessageResult<ShowStats>;

    fn handle(&mut self, _: ShowStats, _: &mut Context<Self>) -> Self::Result {
        let (statements, leases) = self.store.statements();
        MessageResult(QuotaStats {
            statements,
            leases,
            admitted: self.admitted,
            refused: self.refused,
        })
    }
}
