//! The QuotaActor: step 7 of the check chain. Per-minute and daily quotas of keys and
//! of their owners' accounts (D6, D11), held in memory and leased from Postgres, and
//! the call log.
//!
//! A `Charge` with budget in hand for both its key and its account is answered from
//! memory, at once, most often by the shard's handle on the caller's thread without
//! reaching the actor ([`super::book`]). Without it, the call waits for one lease
//! statement that covers whichever of the two needs budget; calls with that key
//! arriving meanwhile queue behind it, in order, and calls with the account's other
//! keys that need the account's budget wait for that statement instead of starting
//! another. So the database sees one statement per block of calls, not one per call.
//! A busy key does not wait even for that: once it, or its account, is down to a
//! quarter of its last block, the handle asks for the next one ([`LeaseAhead`]) and
//! its calls go on being admitted from memory while the statement runs.
//! Spent calls, given-back budget and call records go to the flusher on a timer, when
//! a key is part of the way to its bound of unreported calls
//! ([`super::lease::report_at`]), and at shutdown ([`Drain`]).
//!
//! Leases are this instance's to spend only while it proves it is alive: each lease and
//! flush statement renews them for `lease_ttl` from when it was sent (less a tenth, so
//! the database's own expiry is always later), and a flush runs at least every quarter
//! of it. Past that, or with as many calls unreported as a crash may cost
//! ([`super::lease::at_risk`]), a call waits for a flush like it would for a lease
//! ([`reporting`]). If the database says the leases were reclaimed after all, the actor
//! starts over under a new id, holding nothing.
//!
//! It must never admit a call from budget it does not hold, for the key or for the
//! account, nor from leases it is not sure are still its own: that is the whole of the
//! exactness across instances.

mod reporting;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::{NaiveDate, TimeDelta};
use rand::Rng;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use super::book::{self, Book};
use super::decision::Verdict;
use super::flusher::{self, Batch, Job};
use super::lease::{LeaseAsk, LeaseGrant, Leases};
use super::ledger::{decide, AccountEntry, LedgerStatement, Waiter};
use super::messages::{
    Admission, Charge, Drain, DrainReport, LeaseAhead, QuotaStats, ReportSoon, ShowStats,
};
use super::store::{Instance, QuotaStore, StoreError};
use super::subject::Subject;
use super::window::Window;
use crate::clock::Clock;

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
    /// How long one statement proves this instance alive: leases of an instance that
    /// stops renewing them are reclaimed this long after its last statement.
    pub lease_ttl: Duration,
}

impl Default for QuotaSettings {
    fn default() -> Self {
        QuotaSettings {
            flush_interval: Duration::from_secs(1),
            retention_days: 90,
            idle_release: Duration::from_secs(10),
            lease_ttl: Duration::from_secs(20),
        }
    }
}

pub struct QuotaActor {
    store: QuotaStore,
    clock: Arc<dyn Clock>,
    settings: QuotaSettings,
    instance: Instance,
    /// Keys whose first waiting call needs a flush to land first.
    awaiting_report: Vec<String>,
    /// What the actor knows, shared with its shard's handles ([`book`]).
    book: Arc<Mutex<Book>>,
    flusher: mpsc::UnboundedSender<Job>,
    flusher_jobs: Option<mpsc::UnboundedReceiver<Job>>,
    last_prune: Option<NaiveDate>,
}

impl QuotaActor {
    pub fn new(store: QuotaStore, clock: Arc<dyn Clock>, settings: QuotaSettings) -> Self {
        let (flusher, jobs) = mpsc::unbounded_channel();
        QuotaActor {
            store,
            clock,
            instance: Instance {
                id: rand::thread_rng().gen(),
                ttl: settings.lease_ttl,
            },
            settings,
            awaiting_report: Vec::new(),
            book: Arc::default(),
            flusher,
            flusher_jobs: Some(jobs),
            last_prune: None,
        }
    }

    /// The book this actor keeps, for its shard's handles.
    pub(super) fn book(&self) -> Arc<Mutex<Book>> {
        self.book.clone()
    }

    /// The clock it reads, for its shard's handles.
    pub(super) fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Decides the waiters of `key_id` in order until one needs a lease, and starts it
    /// (or waits for the account's statement another key has started).
    fn serve(&mut self, book: &mut Book, key_id: &str, ctx: &mut Context<Self>) {
        let now = self.clock.now();
        let mono = Instant::now();
        let db_down = book.db_down(mono);
        let renewed = book.renewed(mono);
        loop {
            let Some(entry) = book.keys.get_mut(key_id) else {
                return;
            };
            let Some(waiter) = entry.waiting.front() else {
                return;
            };
            let (user_id, account_limits) = (entry.user_id, waiter.account_limits);
            let account = book
                .accounts
                .entry(user_id)
                .or_insert_with(|| AccountEntry::new(user_id, account_limits, now, mono));
            let charge = (waiter.limits, waiter.account_limits, waiter.count);
            let clock = (now, mono, renewed);
            let verdict = decide(&mut entry.leases, &mut account.leases, charge, clock);
            if verdict == Verdict::Report && !db_down {
                self.await_report(book, key_id);
                return;
            }
            if verdict == Verdict::Lease && !db_down {
                if entry.leasing {
                    return; // its statement serves this key again when it ends
                }
                let waiting = entry.waiting.iter().filter(|w| w.count).count() as i64;
                let account_asks = account.leases.asks(waiting, mono);
                if !account_asks.is_empty() && account.leasing {
                    if !account.blocked.iter().any(|k| k == key_id) {
                        account.blocked.push(key_id.to_string());
                    }
                    return;
                }
                let key_asks = entry.leases.asks(waiting, mono);
                // A `Lease` verdict always has something to ask; should it ever not, the
                // call is answered 50000 below rather than left waiting for nothing.
                if !key_asks.is_empty() || !account_asks.is_empty() {
                    entry.leasing = true;
                    account.leasing |= !account_asks.is_empty();
                    let statement = LedgerStatement {
                        key_id: key_id.to_string(),
                        user_id,
                        key_asks,
                        account_asks,
                    };
                    self.lease(statement, ctx);
                    return;
                }
            }
            let Some(waiter) = entry.waiting.pop_front() else {
                return;
            };
            let subjects = [&entry.subject, &account.subject];
            let admission = book.tally.settle(subjects, waiter.count, verdict, now);
            let _ = waiter.reply.send(admission);
        }
    }

    /// Leases `key_id`'s next block, and its account's, before they run out (see
    /// [`LeaseAhead`]), unless a statement for either is running already.
    fn lease_ahead(&mut self, book: &mut Book, key_id: &str, ctx: &mut Context<Self>) {
        let db_down = book.db_down(Instant::now());
        let Some(entry) = book.keys.get_mut(key_id) else {
            return;
        };
        entry.ahead_asked = false;
        if entry.leasing || db_down {
            return;
        }
        let Some(account) = book.accounts.get_mut(&entry.user_id) else {
            return;
        };
        let key_asks = entry.leases.asks_ahead();
        let account_asks = match account.leasing {
            true => Vec::new(),
            false => account.leases.asks_ahead(),
        };
        if key_asks.is_empty() && account_asks.is_empty() {
            return;
        }
        entry.leasing = true;
        account.leasing |= !account_asks.is_empty();
        let statement = LedgerStatement {
            key_id: key_id.to_string(),
            user_id: entry.user_id,
            key_asks,
            account_asks,
        };
        self.lease(statement, ctx);
    }

    fn lease(&mut self, statement: LedgerStatement, ctx: &mut Context<Self>) {
        let store = self.store.clone();
        let account = Subject::account(statement.user_id);
        let key = Subject::key(&statement.key_id);
        let asks: Vec<(Subject, LeaseAsk)> = (statement.account_asks.iter())
            .map(|ask| (account.clone(), ask.clone()))
            .chain((statement.key_asks.iter()).map(|ask| (key.clone(), ask.clone())))
            .collect();
        let instance = self.instance;
        let run = async move {
            let sent = Instant::now();
            (sent, store.lease(instance, &asks).await)
        };
        ctx.spawn(run.into_actor(self).map(move |(sent, grants), act, ctx| {
            act.leased(statement, instance, sent, grants, ctx)
        }));
    }

    /// Takes in the answers of a lease statement `instance` sent at `sent`, and serves
    /// the keys that waited for it.
    fn leased(
        &mut self,
        statement: LedgerStatement,
        instance: Instance,
        sent: Instant,
        grants: Result<Vec<LeaseGrant>, StoreError>,
        ctx: &mut Context<Self>,
    ) {
        let shared = self.book.clone();
        let book = &mut *book::lock(&shared);
        let mono = Instant::now();
        let LedgerStatement {
            key_id,
            user_id,
            key_asks,
            account_asks,
        } = statement;
        match grants {
            // Sent under an id this instance has since left: the reclaim that made it
            // leave gave back whatever the statement took.
            _ if instance != self.instance => {}
            Err(StoreError::Fenced) => self.start_over(book),
            Err(StoreError::Failed(err)) => {
                tracing::warn!(error = %err.message, "quota lease failed");
                book.db_down_until = Some(mono + DB_RETRY);
            }
            Ok(grants) => {
                self.renew(book, sent);
                book.db_down_until = None;
                // One grant per ask, in the order asked (the store answers so or errs):
                // the account's first.
                let (account_grants, key_grants) =
                    grants.split_at(account_asks.len().min(grants.len()));
                // The entries cannot leave memory while their statement runs (see
                // `hand_over`); should one have, its budget goes back, never stranded.
                match book.accounts.get_mut(&user_id) {
                    Some(entry) => {
                        for (ask, grant) in account_asks.iter().zip(account_grants) {
                            entry.leases.granted(ask, *grant, mono);
                        }
                    }
                    None => {
                        let account = Subject::account(user_id);
                        book.tally
                            .give_back(&account, &account_asks, account_grants)
                    }
                }
                match book.keys.get_mut(&key_id) {
                    Some(entry) => {
                        for (ask, grant) in key_asks.iter().zip(key_grants) {
                            entry.leases.granted(ask, *grant, mono);
                        }
                    }
                    None => {
                        let key = Subject::key(&key_id);
                        book.tally.give_back(&key, &key_asks, key_grants)
                    }
                }
            }
        }
        if let Some(entry) = book.keys.get_mut(&key_id) {
            entry.leasing = false;
        }
        let mut blocked = Vec::new();
        if !account_asks.is_empty() {
            if let Some(entry) = book.accounts.get_mut(&user_id) {
                entry.leasing = false;
                blocked = std::mem::take(&mut entry.blocked);
            }
        }
        self.serve(book, &key_id, ctx);
        for other in blocked {
            self.serve(book, &other, ctx);
        }
    }

    /// Hands the flusher what was spent since the last tick, after giving back the
    /// leases of keys and accounts idle for `idle_release` (or of all, at shutdown).
    /// Something is sent when there is something to write, when the leases held need
    /// renewing, or when `renew` asks for it.
    fn hand_over(&mut self, book: &mut Book, release_all: bool, renew: bool) {
        let now = self.clock.now();
        let mono = Instant::now();
        let idle = self.settings.idle_release;
        let gone = |last_call: Instant| release_all || mono.duration_since(last_call) >= idle;
        let mut released = Vec::new();
        // Whether to keep a key's or an account's entry, `idle` when nothing waits on it
        // and it has been quiet long enough; one let go gives its leases back. Released
        // only once everything it spent is reported: a key coming back must not start a
        // fresh count of unreported calls while the old one is pending.
        let mut keep = |idle: bool, subject: &Subject, leases: &mut Leases| {
            let release = idle && (release_all || leases.unreported() == 0);
            if release {
                released.push((subject.clone(), leases.release(now)));
            }
            !release
        };
        book.keys.retain(|_, entry| {
            let idle = entry.waiting.is_empty() && !entry.leasing && gone(entry.last_call);
            keep(idle, &entry.subject, &mut entry.leases)
        });
        book.accounts.retain(|_, entry| {
            let idle = entry.blocked.is_empty() && !entry.leasing && gone(entry.last_call);
            keep(idle, &entry.subject, &mut entry.leases)
        });
        for (subject, give_backs) in released {
            for give_back in give_backs {
                let window = (subject.clone(), give_back.window, give_back.start);
                book.tally.spent.entry(window).or_default().returned += give_back.amount;
            }
        }
        let batch = Batch {
            windows: std::mem::take(&mut book.tally.spent),
            calls: std::mem::take(&mut book.calls),
            at: Some(now),
        };
        if !batch.is_empty() || renew {
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
            let (store, instance) = (self.store.clone(), self.instance);
            let actor = ctx.address().recipient();
            actix::spawn(flusher::run(store, instance, actor, jobs));
        }
        ctx.run_interval(self.settings.flush_interval, |act, _| {
            let shared = act.book.clone();
            let mut book = book::lock(&shared);
            act.hand_over(&mut book, false, false);
        });
    }
}

impl Handler<Charge> for QuotaActor {
    type Result = Response<Admission>;

    /// Runs in the charge's span: the shard's handle made it, and settled the charge
    /// at once if it could ([`Book::settle_at_once`]). Here it is tried again (a lease
    /// may have landed since) and otherwise queued behind the key's statement.
    fn handle(&mut self, msg: Charge, ctx: &mut Context<Self>) -> Self::Result {
        let span = msg.span.clone();
        let _enter = span.enter();
        let shared = self.book.clone();
        let book = &mut *book::lock(&shared);
        let settled = book.settle_at_once(&msg, self.clock.now(), Instant::now());
        if settled.report {
            self.hand_over(book, false, true);
        }
        if settled.lease_ahead {
            self.lease_ahead(book, &msg.key_id, ctx);
        }
        if let Some(admission) = settled.admission {
            return Response::reply(admission);
        }
        let Some(entry) = book.keys.get_mut(&*msg.key_id) else {
            return Response::reply(Admission::unavailable());
        };
        let (reply, answer) = oneshot::channel();
        entry.waiting.push_back(Waiter {
            limits: msg.limits,
            account_limits: msg.account_limits,
            count: msg.count,
            reply,
        });
        self.serve(book, &msg.key_id, ctx);
        Response::fut(
            async move { answer.await.unwrap_or_else(|_| Admission::unavailable()) }
                .instrument(span.clone()),
        )
    }
}

impl Handler<Drain> for QuotaActor {
    type Result = ResponseFuture<DrainReport>;

    fn handle(&mut self, msg: Drain, _: &mut Context<Self>) -> Self::Result {
        let shared = self.book.clone();
        self.hand_over(&mut book::lock(&shared), true, false);
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

impl Handler<ReportSoon> for QuotaActor {
    type Result = ();

    /// The handle already marked the report as asked ([`Book::report_asked`]).
    fn handle(&mut self, _: ReportSoon, _: &mut Context<Self>) {
        let shared = self.book.clone();
        self.hand_over(&mut book::lock(&shared), false, true);
    }
}

impl Handler<LeaseAhead> for QuotaActor {
    type Result = ();

    /// The handle already marked the key ([`super::ledger::KeyEntry::ahead_asked`]).
    fn handle(&mut self, msg: LeaseAhead, ctx: &mut Context<Self>) {
        let shared = self.book.clone();
        self.lease_ahead(&mut book::lock(&shared), &msg.key_id, ctx);
    }
}

impl Handler<ShowStats> for QuotaActor {
    type Result = MessageResult<ShowStats>;

    fn handle(&mut self, _: ShowStats, _: &mut Context<Self>) -> Self::Result {
        let (statements, leases) = self.store.statements();
        let book = book::lock(&self.book);
        MessageResult(QuotaStats {
            statements,
            leases,
            admitted: book.tally.admitted,
            refused: book.tally.refused,
        })
    }
}
