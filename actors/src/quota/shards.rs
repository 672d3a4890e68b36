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
//! Must never let two shards own the same account: the owner is a pure function of the
//! user id and the shard count, fixed at start.

use std::sync::Arc;

use actix::prelude::*;

use super::actor::QuotaActor;
use super::messages::{Drain, DrainReport, QuotaStats, ShowStats};

/// The shards; cloned handles share them. The arbiters stop when the last handle goes.
#[derive(Clone)]
pub struct QuotaShards {
    inner: Arc<Inner>,
}

struct Inner {
    shards: Vec<Addr<QuotaActor>>,
    arbiters: Vec<ArbiterHandle>,
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
            let make = make.clone();
            shards.push(QuotaActor::start_in_arbiter(&arbiter, move |_| make()));
            arbiters.push(arbiter);
        }
        QuotaShards {
            inner: Arc::new(Inner { shards, arbiters }),
        }
    }

    /// The shard that owns `user_id`'s account and keys.
    pub fn of(&self, user_id: i64) -> &Addr<QuotaActor> {
        let shards = &self.inner.shards;
        &shards[user_id.rem_euclid(shards.len() as i64) as usize]
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
            shard.send(Drain {
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
            let stats = shard.send(ShowStats).await?;
            total.statements += stats.statements;
            total.leases += stats.leases;
            total.admitted += stats.admitted;
            total.refused += stats.refused;
        }
        Ok(total)
    }
}
