//! Writes what the QuotaActor spent and logged to Postgres, one batch at a time.
//!
//! A batch that fails is retried as it was, under the same sequence number, until it
//! lands: the flush statement skips an `(instance, seq)` it has applied before, so a
//! retry after a lost reply never counts calls twice or gives budget back twice (which
//! would let the instances admit more than the limit). Batches that arrive meanwhile
//! are merged into one waiting batch, so an outage costs memory for one batch, not one
//! per tick; the call log part of it is capped.
//!
//! Runs as its own task so a slow database never delays a `Charge`.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, oneshot};

use super::store::{CallRecord, QuotaStore, Spent, WindowKey};

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
}

struct Flusher {
    store: QuotaStore,
    instance_id: i64,
    seq: i64,
    /// Sent at least once (under `seq`) and not acknowledged.
    attempted: Option<Batch>,
    /// Not sent yet.
    waiting: Batch,
    dropped_calls: usize,
}

impl Flusher {
    /// Sends what is pending; answers whether everything landed.
    async fn send(&mut self) -> bool {
        loop {
            if self.attempted.is_none() {
                if self.waiting.is_empty() {
                    return true;
                }
                let mut next = std::mem::take(&mut self.waiting);
                if next.calls.len() > MAX_CALLS_PER_STATEMENT {
                    self.waiting.calls = next.calls.split_off(MAX_CALLS_PER_STATEMENT);
                    self.waiting.at = next.at;
                }
                self.seq += 1;
                self.attempted = Some(next);
            }
            let Some(batch) = &self.attempted else {
                return true;
            };
            let windows: Vec<_> = batch.windows.iter().map(|(k, s)| (k.clone(), *s)).collect();
            let at = batch.at.unwrap_or_else(Utc::now);
            match (self.store)
                .flush(self.instance_id, self.seq, at, &windows, &batch.calls)
                .await
            {
                Ok(_) => self.attempted = None,
                Err(err) => {
                    tracing::warn!(
                        error = %err.message,
                        windows = windows.len(),
                        calls = batch.calls.len(),
                        "quota flush failed; will retry"
                    );
                    return false;
                }
            }
        }
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
}

/// Runs until the sender side (the QuotaActor) is gone.
pub async fn run(store: QuotaStore, instance_id: i64, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let retry = Duration::from_millis(500);
    let mut flusher = Flusher {
        store,
        instance_id,
        seq: 0,
        attempted: None,
        waiting: Batch::default(),
        dropped_calls: 0,
    };
    let mut behind = false;
    loop {
        let job = if behind {
            tokio::select! {
                job = jobs.recv() => job,
                () = tokio::time::sleep(retry) => {
                    behind = !flusher.send().await;
                    continue;
                }
            }
        } else {
            jobs.recv().await
        };
        match job {
            None => return,
            Some(Job::Flush(batch)) => {
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
        }
    }
}
