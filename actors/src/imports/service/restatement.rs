//! Restatements (D26): when the method of calculation changes, every index is
//! recalculated from its first day with its quotes as they are, and what changed is
//! published as one vintage whose revisions (and `index.revised` events) carry the
//! change's reason, so `as_of` before it still answers the old values.
//!
//! A migration that changes the method owes one: it adds its reason to
//! `restatements_due` when the database holds values. [`Importer::restate_due`] pays
//! every restatement owed, each in one transaction under the import lock, deleting its
//! row as it commits, so any number of instances starting together restate once. It
//! must never change a quote.

use super::{locked_calendar, Importer, IMPORT_LOCK, IMPORT_STATEMENT_TIMEOUT};
use crate::calendar::service_today;
use crate::changes::Change;
use crate::db::Traced;
use crate::events;
use crate::quotes::history;
use crate::quotes::store::{self, QuoteWriter, Recalculated};
use crate::ApiError;

/// One restatement paid.
#[derive(Debug, Clone)]
pub struct Restated {
    pub reason: String,
    /// What it recalculated and changed.
    pub recalculated: Recalculated,
}

impl Importer {
    /// Pays every restatement the database owes, oldest reason first; answers them.
    pub async fn restate_due(&self) -> Result<Vec<Restated>, ApiError> {
        let mut done = Vec::new();
        while let Some(restated) = self.restate_one().await? {
            tracing::info!(
                reason = %restated.reason,
                daily_rows = restated.recalculated.daily_rows,
                "restated every index"
            );
            done.push(restated);
        }
        Ok(done)
    }

    /// Pays the first restatement owed, if any, in one transaction.
    async fn restate_one(&self) -> Result<Option<Restated>, ApiError> {
        // Nearly every start owes nothing: it must not wait for another instance's
        // import to learn so.
        let owed: bool = self
            .pool
            .get()
            .await?
            .query_value_named(
                "restatement.owed",
                "SELECT EXISTS (SELECT 1 FROM restatements_due)",
                &[],
            )
            .await?;
        if !owed {
            return Ok(None);
        }
        self.bus
            .write_announcing(&self.pool, async |tx| {
                tx.batch_execute_named("imports.set_timeout", IMPORT_STATEMENT_TIMEOUT)
                    .await?;
                // Waits for an import, or another instance's restatement, to finish.
                tx.execute_named(
                    "restatement.lock",
                    "SELECT pg_advisory_xact_lock($1)",
                    &[&IMPORT_LOCK],
                )
                .await?;
                let reason: Option<String> = tx
                    .query_opt_value_named(
                        "restatement.next",
                        "DELETE FROM restatements_due WHERE reason = \
                           (SELECT reason FROM restatements_due ORDER BY reason LIMIT 1) \
                         RETURNING reason",
                        &[],
                    )
                    .await?;
                let Some(reason) = reason else {
                    return Ok((None, None));
                };
                let open_days = locked_calendar(tx).await?;
                let composites = store::composites(tx).await?;
                let vintage = history::next_vintage(tx).await?;
                let recalculated = QuoteWriter::restating(tx, vintage)
                    .await?
                    .recalculate(tx, &open_days, &composites)
                    .await?;
                history::publish(tx, vintage, None, Some(&reason)).await?;
                let now = self.clock.now();
                events::record(tx, Some(vintage), service_today(now, self.service_tz), now).await?;
                Ok((
                    Some(Restated {
                        reason,
                        recalculated,
                    }),
                    Some(Change::Data),
                ))
            })
            .await
    }
}
