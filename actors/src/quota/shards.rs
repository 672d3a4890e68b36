//! The QuotaActors of one process: one per arbiter (thread) of its own, each owning
//! the accounts whose user id falls to it, and with them every key of those accounts.
//!
//! One QuotaActor for the whole process would serialise every counted call on one
//! thread. Sharded, unrelated keys are decided on different threads, while a key and
//! its account are always decided by the same shard, so an account's budget is never
//! split between shards of one process. Each shard leases, reports and renews as an
//! instance of its own (its own id in `quota_instances`), so the limits stay exact
//! across shards exactly as they are across processes.
//!
//! Callers charge through [`QuotaShards::charge`]: a charge the owning shard's book can
//! settle from memory is settled on the caller's thread, under the book's lock
//! ([`super::book`]); only a charge that needs a statement or must queue is sent to the
//! shard's thread.
//!
//! Must never let two shards own the same account: the owner is a pure function of the
//! user id and the shard count, fixed at start.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix::prelude::*;

use super::actor::QuotaActor;
use super::book::{self, Book};
use super::messages::{
    Admission, Charge, Drain, DrainReport, LeaseAhead, QuotaStats, ReportSoon, ShowStats,
};
use super::store::CallRecord;
use crate::clock::Clock;
use crate::metrics::{metrics, Outcomes};

/// The shards; cloned handles share them. The arbiters stop when the last handle goes.
#[derive(Clone)]
pub struct QuotaShards {
    inner: Arc<Inner>,
}

struct Inner {
    shards: Vec<Shard>,
    arbiters: Vec<ArbiterHandle>,
    /// `iq_quota_charges_total`: how many charges were settled at once.
    charges: Outcomes,
}

/// One QuotaActor, its book and its clock.
struct Shard {
    actor: Addr<QuotaActor>,
    book: Arc<Mutex<Book>>,
    clock: Arc<dyn Clock>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for arbiter in &self.arbiters {
            arbiter.stop();
        }
    }
}

impl QuotaShards {
    /// Starts `count` (at least one) shards, each on an arbiter of its own, making each
    /// actor on its own thread.
    pub fn start<F>(count: usize, make: F) -> QuotaShards
    where
        F: Fn() -> QuotaActor + Send + Sync + 'static,
    {
        let make = Arc::new(make);
        let (mut shards, mut arbiters) = (Vec::new(), Vec::new());
        for _ in 0..count.max(1) {
            let arbiter = Arbiter::new().handle();
            let actor = make();
            let (book, clock) = (actor.book(), actor.clock());
            let actor = QuotaActor::start_in_arbiter(&arbiter, move |_| actor);
            shards.push(Shard { actor, book, clock });
            arbiters.push(arbiter);
        }
        QuotaShards {
            inner: Arc::new(Inner {
                shards,
                arbiters,
                charges: metrics().quota_charges(),
            }),
        }
    }

    /// The shard that owns `user_id`'s account and keys.
    fn of(&self, user_id: i64) -> &Shard {
        let shards = &self.inner.shards;
        &shards[user_id.rem_euclid(shards.len() as i64) as usize]
    }

    /// Step 7 for one call, by the shard that owns the key's account: settled here when
    /// memory suffices, otherwise by the shard's actor (a lease, a report, or a queue to
    /// wait in) in a `quota.charge` span under `msg.span`. `msg.span`'s
    /// `quota.in_memory` says which: a charge settled in memory takes about a
    /// microsecond, less than a span of its own would cost.
    pub fn charge(&self, mut msg: Charge) -> impl Future<Output = Admission> + 'static {
        let shard = self.of(msg.user_id);
        let settled =
            book::lock(&shard.book).settle_at_once(&msg, shard.clock.now(), Instant::now());
        msg.span
            .record("quota.in_memory", settled.admission.is_some());
        self.inner.charges.count(settled.admission.is_some());
        if settled.admission.is_none() {
            msg.span = tracing::info_span!(parent: &msg.span, "quota.charge");
        }
        let actor = &shard.actor;
        if settled.report {
            actor.do_send(ReportSoon);
        }
        if settled.lease_ahead {
            actor.do_send(LeaseAhead {
                key_id: msg.key_id.clone(),
            });
        }
        // Sent here rather than kept for later: a future that kept the address would
        // clone it, which allocates, on every charge, including those settled above.
        let asked = match settled.admission {
            Some(admission) => Ok(admission),
            None => Err(actor.send(msg)),
        };
        async move {
            match asked {
                Ok(admission) => admission,
                Err(request) => request.await.unwrap_or_else(Admission::failed),
            }
        }
    }

    /// Keeps a counted call's record for the flush of the shard owning `user_id`.
    pub fn record(&self, user_id: i64, call: CallRecord) {
        book::lock(&self.of(user_id).book).record(call);
    }

    /// How many shards there are.
    pub fn len(&self) -> usize {
        self.inner.shards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.shards.is_empty()
    }

    /// Drains every shard at once (see [`Drain`]); what none could write, summed.
    pub async fn drain(&self, msg: Drain) -> Result<DrainReport, MailboxError> {
        let sends = (self.inner.shards.iter()).map(|shard| {
            shard.actor.send(Drain {
                timeout: msg.timeout,
            })
        });
        let mut total = DrainReport {
            lost_windows: 0,
            lost_calls: 0,
        };
        for report in futures_util::future::join_all(sends).await {
            let report = report?;
            total.lost_windows += report.lost_windows;
            total.lost_calls += report.lost_calls;
        }
        Ok(total)
    }

    /// The counters of every shard, summed.
    pub async fn stats(&self) -> Result<QuotaStats, MailboxError> {
        let mut total = QuotaStats {
            statements: 0,
            leases: 0,
            admitted: 0,
            refused: 0,
        };
        for shard in &self.inner.shards {
            let stats = shard.actor.send(ShowStats).await?;
            total.statements += stats.statements;
            total.leases += stats.leases;
            total.admitted += stats.admitted;
            total.refused += stats.refused;
        }
        Ok(total)
    }
}
