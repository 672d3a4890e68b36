//! Writes what the QuotaActor spent and logged to Postgres, one batch at a time.
//!
//! A batch that fails is retried as it was, under the same sequence number, until it
//! lands: the flush statement skips an `(instance, seq)` it has applied before, so a
//! retry after a lost reply never counts calls twice or gives budget back twice (which
//! would let the instances admit more than the limit). Batches that arrive meanwhile
//! are merged into one waiting batch, so an outage costs memory for one batch, not one
//! per tick; the call log part of it is capped.
//!
//! Each landed batch is told to the QuotaActor ([`Flushed`]) with the day calls it
//! wrote: the actor bounds the calls it has spent and not reported (see
//! [`super::lease::at_risk`]), and counts its leases as its own to spend for a TTL from
//! the moment the statement was sent.
//!
//! Runs as its own task so a slow database never delays a `Charge`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use actix::Recipient;
use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, oneshot};

use super::messages::Flushed;
use super::store::{CallRecord, Instance, QuotaStore, Spent, StoreError, WindowKey};
use super::window::Window;
use crate::metrics::{metrics, ReclaimLabels};

/// Call-log rows held while the database is unreachable; later ones are dropped (and
/// counted in the log), the quota counts never are.
pub const MAX_BUFFERED_CALLS: usize = 200_000;
/// Rows per flush statement.
const MAX_CALLS_PER_STATEMENT: usize = 20_000;

#[derive(Debug, Default)]
pub struct Batch {
    pub windows: BTreeMap<WindowKey, Spent>,
    pub calls: Vec<CallRecord>,
    pub at: Option<DateTime<Utc>>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty() && self.calls.is_empty()
    }

    /// Adds `other` to this batch; answers how many call records did not fit.
    fn absorb(&mut self, other: Batch) -> usize {
        for (window, spent) in other.windows {
            let entry = self.windows.entry(window).or_default();
            entry.used += spent.used;
            entry.returned += spent.returned;
        }
        let room = MAX_BUFFERED_CALLS.saturating_sub(self.calls.len());
        let dropped = other.calls.len().saturating_sub(room);
        self.calls.extend(other.calls.into_iter().take(room));
        self.at = other.at.or(self.at);
        dropped
    }
}

pub enum Job {
    /// Write this batch; an empty one still renews this instance's proof of life.
    Flush(Batch),
    Prune {
        now: DateTime<Utc>,
        before: DateTime<Utc>,
    },
    /// Write everything, retrying until `deadline`, then answer what could not be written.
    Drain {
        deadline: tokio::time::Instant,
        done: oneshot::Sender<Batch>,
    },
    /// The QuotaActor started over under a new id after its leases were reclaimed.
    /// What was queued before spent or gave back the old id's budget, which the reclaim
    /// settled: only its call records are still to be written.
    Rebind(Instance),
}

struct Flusher {
    store: QuotaStore,
    instance: Instance,
    actor: Recipient<Flushed>,
    seq: i64,
    /// Sent at least once (under `seq`) and not acknowledged.
    attempted: Option<Batch>,
    /// Not sent yet.
    waiting: Batch,
    /// Send a statement even if there is nothing to write: it renews the proof of life.
    renew: bool,
    /// The database refused this id (its leases were reclaimed): nothing is sent until
    /// the actor gives a new one.
    fenced: bool,
    dropped_calls: usize,
}

impl Flusher {
    /// Sends what is pending; answers whether everything landed.
    async fn send(&mut self) -> bool {
        loop {
            if self.fenced {
                return false;
            }
            if self.attempted.is_none() {
                if self.waiting.is_empty() && !self.renew {
                    return true;
                }
                let mut next = std::mem::take(&mut self.waiting);
                if next.calls.len() > MAX_CALLS_PER_STATEMENT {
                    self.waiting.calls = next.calls.split_off(MAX_CALLS_PER_STATEMENT);
                    self.waiting.at = next.at;
                }
                self.seq += 1;
                self.attempted = Some(next);
                self.renew = false;
            }
            let Some(batch) = &self.attempted else {
                return true;
            };
            let windows: Vec<_> = batch.windows.iter().map(|(k, s)| (k.clone(), *s)).collect();
            let at = batch.at.unwrap_or_else(Utc::now);
            let sent = Instant::now();
            match (self.store)
                .flush(self.instance, self.seq, at, &windows, &batch.calls)
                .await
            {
                Ok(_) => {
                    let used = (windows.into_iter())
                        .filter(|((_, window, _), spent)| *window == Window::Day && spent.used > 0)
                        .map(|((subject, _, start), spent)| (subject, start, spent.used))
                        .collect();
                    self.actor.do_send(Flushed::Written {
                        instance: self.instance.id,
                        sent,
                        used,
                    });
                    self.attempted = None;
                }
                Err(StoreError::Fenced) => {
                    tracing::warn!(
                        instance = self.instance.id,
                        "this instance's quota leases were reclaimed: it was out of touch \
                         with the database longer than QUOTA_LEASE_TTL_MS; starting over"
                    );
                    self.fenced = true;
                    self.settled_by_reclaim();
                    self.actor.do_send(Flushed::Fenced {
                        instance: self.instance.id,
                    });
                    return false;
                }
                Err(StoreError::Failed(err)) => {
                    tracing::warn!(
                        error = %err.message,
                        windows = windows.len(),
                        calls = batch.calls.len(),
                        "quota flush failed; will retry"
                    );
                    self.actor.do_send(Flushed::Failed);
                    return false;
                }
            }
        }
    }

    /// Drops what the pending batches spent and gave back: a reclaim settled it.
    fn settled_by_reclaim(&mut self) {
        if let Some(attempted) = &mut self.attempted {
            attempted.windows.clear();
        }
        self.waiting.windows.clear();
    }

    fn absorb(&mut self, batch: Batch) {
        let dropped = self.waiting.absorb(batch);
        if dropped > 0 {
            self.dropped_calls += dropped;
            tracing::warn!(
                dropped = self.dropped_calls,
                "call log buffer full while the database is unreachable; dropping call records"
            );
        }
    }

    fn unsent(&mut self) -> Batch {
        let mut unsent = self.attempted.take().unwrap_or_default();
        unsent.absorb(std::mem::take(&mut self.waiting));
        unsent
    }

    /// Gives back the leases of instances that stopped renewing theirs.
    async fn reclaim(&self) {
        match self.store.reclaim().await {
            Ok(reclaimed) if reclaimed.instances > 0 => {
                let metrics = metrics();
                metrics
                    .quota_reclaimed_instances
                    .inc_by(reclaimed.instances as u64);
                (metrics.quota_reclaimed_calls)
                    .get_or_create(&ReclaimLabels { budget: "returned" })
                    .inc_by(reclaimed.returned as u64);
                (metrics.quota_reclaimed_calls)
                    .get_or_create(&ReclaimLabels { budget: "counted" })
                    .inc_by(reclaimed.counted as u64);
                tracing::warn!(
                    instances = reclaimed.instances,
                    returned = reclaimed.returned,
                    counted = reclaimed.counted,
                    "reclaimed the quota leases of instances that stopped renewing them"
                );
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err.message, "quota lease reclaim failed"),
        }
    }
}

/// Runs until the sender side (the QuotaActor) is gone. Every quarter of the TTL it
/// renews the proof of life (even with nothing to write) and reclaims the leases of
/// instances that stopped renewing theirs.
pub async fn run(
    store: QuotaStore,
    instance: Instance,
    actor: Recipient<Flushed>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
) {
    let retry = Duration::from_millis(500);
    let mut renewal = tokio::time::interval(instance.ttl / 4);
    renewal.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut flusher = Flusher {
        store,
        instance,
        actor,
        seq: 0,
        attempted: None,
        waiting: Batch::default(),
        renew: false,
        fenced: false,
        dropped_calls: 0,
    };
    let mut behind = false;
    loop {
        let job = tokio::select! {
            job = jobs.recv() => job,
            _ = renewal.tick() => {
                flusher.renew = true;
                behind = !flusher.send().await;
                flusher.reclaim().await;
                continue;
            }
            () = tokio::time::sleep(retry), if behind => {
                behind = !flusher.send().await;
                continue;
            }
        };
        match job {
            None => return,
            Some(Job::Flush(batch)) => {
                flusher.renew |= batch.is_empty();
                flusher.absorb(batch);
                behind = !flusher.send().await;
            }
            Some(Job::Prune { now, before }) => match flusher.store.prune(now, before).await {
                Ok(months) => {
                    tracing::info!(months, %before, "pruned the call log and quota windows")
                }
                Err(err) => tracing::warn!(error = %err.message, "call log pruning failed"),
            },
            Some(Job::Drain { deadline, done }) => {
                while !flusher.send().await && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let _ = done.send(flusher.unsent());
                behind = false;
            }
            Some(Job::Rebind(instance)) => {
                flusher.settled_by_reclaim();
                flusher.instance = instance;
                flusher.seq = 0;
                flusher.fenced = false;
                behind = !flusher.send().await;
            }
        }
    }
}
