//! The delivery loop (D22, D27): dispatches new events, claims what is due and keeps up
//! to [`IN_FLIGHT`] attempts going at once, each on a task of its own, recording each
//! as it ends. No attempt waits for another: a silent endpoint holds its own attempts
//! (at most `PER_ENDPOINT`, for at most `SEND_TIMEOUT`) and nothing else, so another
//! endpoint's due attempt is claimed at the next wake-up (an event announced, an
//! attempt finished, or the [`TICK`]).
//!
//! It must never hold a transaction while a message is on its way, and never let a
//! failure of the database end the loop (it logs and tries again at the next wake-up).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::delivery::{Attempt, Deliverer, BATCH};

/// Attempts in flight at once, across endpoints.
const IN_FLIGHT: usize = 1024;
/// How often it looks for due retries when nothing wakes it.
const TICK: Duration = Duration::from_secs(1);
/// Every this many ticks it dispatches even unwoken, and it measures the backlog three
/// times as often.
const SWEEP: u64 = 30;
/// Every this many ticks (an hour) it deletes finished deliveries older than
/// `KEEP_DELIVERIES`, so the log stays the size of a month.
const PRUNE: u64 = 3600;
/// Finished attempts recorded in one statement at most.
const RECORD_BATCH: usize = 256;

/// Why the loop woke.
enum Wake {
    Tick,
    Announced,
    Finished(Attempt),
}

impl Deliverer {
    /// Dispatches and delivers until the bus stops. Events are only ever written with
    /// an announcement on the bus, so it dispatches when `signal` moves (and every
    /// [`SWEEP`] ticks, should an announcement be lost); it claims what is due at every
    /// wake-up that may have made something due or made room, since retries come due
    /// with time alone. Attempts still in flight when it stops are left to their
    /// leases: another instance sends them again once those lapse (at least once).
    pub async fn run(self, mut signal: watch::Receiver<u64>, mut stopping: watch::Receiver<bool>) {
        let this = Arc::new(self);
        let (finished, mut finishing) = mpsc::unbounded_channel();
        let mut interval = tokio::time::interval(TICK);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ticks: u64 = 0;
        let mut in_flight: usize = 0;
        // Whether the last claim may have left due attempts behind (it filled its
        // batch or the room there was): then a finished attempt is a reason to claim.
        let mut more_due = false;
        loop {
            let wake = tokio::select! {
                _ = interval.tick() => Wake::Tick,
                _ = signal.changed() => Wake::Announced,
                Some(attempt) = finishing.recv() => Wake::Finished(attempt),
                _ = stopping.wait_for(|stop| *stop) => return,
            };
            let claim = match wake {
                Wake::Tick => {
                    this.upkeep(ticks).await;
                    ticks += 1;
                    true
                }
                Wake::Announced => {
                    this.dispatch_logged().await;
                    true
                }
                Wake::Finished(first) => {
                    let mut done = vec![first];
                    while done.len() < RECORD_BATCH {
                        match finishing.try_recv() {
                            Ok(attempt) => done.push(attempt),
                            Err(_) => break,
                        }
                    }
                    in_flight -= done.len();
                    if let Err(error) = this.record(&done).await {
                        tracing::warn!(%error, "cannot record webhook attempts");
                    }
                    more_due
                }
            };
            if claim {
                let room = IN_FLIGHT - in_flight;
                match this.claim(room).await {
                    Ok(claimed) => {
                        more_due = claimed.len() == room.min(BATCH as usize);
                        in_flight += claimed.len();
                        for one in claimed {
                            let (this, finished) = (this.clone(), finished.clone());
                            tokio::spawn(async move {
                                // The receiver lives as long as the loop; once it has
                                // stopped, the lease answers for the attempt.
                                let _ = finished.send(this.send(one).await);
                            });
                        }
                    }
                    Err(error) => tracing::warn!(%error, "cannot claim webhook deliveries"),
                }
            }
        }
    }

    /// What a tick does besides claiming: the sweep's dispatch, the backlog's gauges,
    /// the hourly prune.
    async fn upkeep(&self, ticks: u64) {
        if ticks % SWEEP == 0 {
            self.dispatch_logged().await;
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
    }

    async fn dispatch_logged(&self) {
        if let Err(error) = self.dispatch().await {
            tracing::warn!(%error, "cannot queue webhook deliveries");
        }
    }
}
