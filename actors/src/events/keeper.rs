//! The window keeper: moves each tier's event window (see `outbox`) when the day of the
//! service time zone changes, and after any change announced on the bus (a tier's
//! delay or the calendar can move a cutoff), so a delayed tier hears `index.published`
//! for a day when the day enters its window, not when a member without delay does.
//!
//! Every instance runs one; the outbox's lock makes their work add up to one move. It
//! looks at the clock once a second and touches the database only when the day or the
//! bus's signal moved, or its last try failed. It must never write an event itself:
//! `outbox::record` does.

use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use chrono_tz::Tz;
use deadpool_postgres::Pool;
use tokio::sync::watch;

use super::outbox;
use crate::calendar::service_today;
use crate::changes::{Change, ChangeBus};
use crate::clock::Clock;
use crate::ApiError;

/// How often the keeper looks at the clock.
const TICK: Duration = Duration::from_secs(1);

pub struct WindowKeeper {
    pub pool: Pool,
    pub clock: Arc<dyn Clock>,
    pub service_tz: Tz,
    pub bus: ChangeBus,
}

impl WindowKeeper {
    /// Moves every window to today's cutoff now, writing the events of the days that
    /// entered it (announced on the bus when there are any). Returns how many.
    pub async fn advance(&self) -> Result<u64, ApiError> {
        let now = self.clock.now();
        let today = service_today(now, self.service_tz);
        self.bus
            .write_announcing(&self.pool, async |tx| {
                let written = outbox::record(tx, None, today, now).await?;
                Ok((written, (written > 0).then_some(Change::Events)))
            })
            .await
    }

    /// Keeps the windows moving until the bus stops; `signal` is the bus's news.
    pub async fn run(self, mut signal: watch::Receiver<u64>) {
        let mut stopping = self.bus.stopping();
        let mut placed_on: Option<NaiveDate> = None;
        let mut interval = tokio::time::interval(TICK);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = interval.tick() => {}
                _ = stopping.wait_for(|stop| *stop) => return,
            }
            let today = service_today(self.clock.now(), self.service_tz);
            let news = signal.has_changed().unwrap_or(false);
            if placed_on == Some(today) && !news {
                continue;
            }
            signal.mark_unchanged();
            match self.advance().await {
                Ok(written) => {
                    if written > 0 {
                        tracing::info!(events = written, %today, "event windows moved");
                    }
                    placed_on = Some(today);
                }
                // Tried again on the next tick: the day is not marked as done.
                Err(error) => {
                    tracing::warn!(%error, "cannot move the event windows");
                    placed_on = None;
                }
            }
        }
    }
}
