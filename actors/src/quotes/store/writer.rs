//! [`QuoteWriter`]: one batch of quotes written piece by piece in the caller's
//! transaction, then `index_daily` recalculated once from the earliest day it replaced,
//! counting what changed per index ([`IndexChanges`]).
//!
//! This holds the order of the steps and the counting; the statements are in
//! [`super::recalculation`] and the arithmetic in `quotes::recalc`. It must never
//! commit, nor write a row without its vintage (D17).

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use tokio_postgres::Transaction;

use super::changes::{IndexChanges, Recalculated};
use super::composites::Composite;
use super::copy_in::copy_rows;
use super::recalculation::{
    composite_rows, delete_daily, index_rows, kept_quotes, start_of, starting_points, write_daily,
    QuotesByDay,
};
use crate::db::Traced;
use crate::quotes::history::{DailyVersions, QuoteVersions};
use crate::quotes::recalc::QuoteRow;
use crate::ApiError;

/// One batch of quotes written piece by piece, then recalculated once: an import
/// stores each piece of the file as soon as it is validated, while the rest is still
/// being read. The replaced (date, index) days are whole: a day's old quotes are
/// deleted before the first of its new ones is written, and the batch itself never
/// repeats a (date, index, specification) (the validator refuses duplicates).
///
/// Every row it writes carries a vintage (D17): its own, or, for a row rewritten with
/// the same values, the one it had; what it replaces otherwise goes to history.
pub struct QuoteWriter {
    /// The vintage this batch publishes.
    vintage: i64,
    /// The batch's quotes by index and day, kept for the recalculation; its keys are
    /// the (date, index) days the batch replaces.
    batch: QuotesByDay,
    /// Per index, how many of the batch's days held quotes before it (as the deletions
    /// found them).
    replaced: BTreeMap<String, usize>,
    /// The replaced quotes, matched against the new ones.
    versions: QuoteVersions,
}

impl QuoteWriter {
    /// A writer of a batch that publishes `vintage` (see [`super::history::next_vintage`]).
    pub fn new(vintage: i64) -> Self {
        QuoteWriter {
            vintage,
            batch: QuotesByDay::new(),
            replaced: BTreeMap::new(),
            versions: QuoteVersions::default(),
        }
    }

    /// A writer that restates every index from its first day with the quotes as they
    /// are (D26: a change of method), publishing `vintage`: each index's stored quotes
    /// become the batch, and nothing is written but the recalculation.
    pub async fn restating(tx: &Transaction<'_>, vintage: i64) -> Result<Self, ApiError> {
        let rows = tx
            .query_named(
                "recalc.restate_quotes",
                "SELECT index_code, trade_date, weight, price FROM index_quotes",
                &[],
            )
            .await?;
        let mut batch = QuotesByDay::new();
        for q in &rows {
            batch
                .entry(q.try_get("index_code")?)
                .or_default()
                .entry(q.try_get("trade_date")?)
                .or_default()
                .push((q.try_get("weight")?, q.try_get("price")?));
        }
        // Every day is the batch's own, neither added nor replaced.
        let replaced = batch
            .iter()
            .map(|(code, days)| (code.clone(), days.len()))
            .collect();
        Ok(QuoteWriter {
            vintage,
            batch,
            replaced,
            versions: QuoteVersions::default(),
        })
    }

    /// Writes the next piece of the batch.
    pub async fn write(&mut self, tx: &Transaction<'_>, rows: &[QuoteRow]) -> Result<(), ApiError> {
        let mut new_dates = Vec::new();
        let mut new_codes = Vec::new();
        for row in rows {
            let days = match self.batch.get_mut(row.index_code.as_str()) {
                Some(days) => days,
                None => self.batch.entry(row.index_code.clone()).or_default(),
            };
            let day = days.entry(row.trade_date).or_insert_with(|| {
                new_dates.push(row.trade_date);
                new_codes.push(row.index_code.as_str());
                Vec::new()
            });
            day.push((row.weight, row.price));
        }
        if !new_dates.is_empty() {
            // Each (date, index) day is deleted once, by the piece that brings its first
            // quote: the days found holding quotes are the days replaced.
            let gone = tx
                .query_named(
                    "imports.delete_quotes",
                    "DELETE FROM index_quotes q \
                     USING UNNEST($1::date[], $2::text[]) AS r(trade_date, index_code) \
                     WHERE q.trade_date = r.trade_date AND q.index_code = r.index_code \
                     RETURNING q.trade_date, q.index_code, q.specification, q.weight, \
                               q.price, q.vintage",
                    &[&new_dates, &new_codes],
                )
                .await?;
            let mut days: BTreeSet<(NaiveDate, &str)> = BTreeSet::new();
            for row in &gone {
                days.insert((row.try_get("trade_date")?, row.try_get("index_code")?));
            }
            for (_, code) in days {
                *self.replaced.entry(code.to_string()).or_default() += 1;
            }
            self.versions.replaced(&gone)?;
        }
        let vintages = self.versions.assign(rows, self.vintage);
        let versioned: Vec<(&QuoteRow, i64)> = rows.iter().zip(vintages).collect();
        copy_rows(tx, "imports.copy_quotes", &versioned, None).await?;
        Ok(())
    }

    /// Recalculates `index_daily` from the earliest day the batch replaced onward, for
    /// each index it touched and for the composite (D8). `open_days` is the calendar
    /// the batch was checked against. A handful of statements whatever the batch: the
    /// arithmetic is done in memory, every index's rows go out in one `COPY`.
    pub async fn recalculate(
        self,
        tx: &Transaction<'_>,
        open_days: &BTreeSet<NaiveDate>,
        composites: &[Composite],
    ) -> Result<Recalculated, ApiError> {
        let QuoteWriter {
            vintage,
            batch,
            replaced,
            versions,
        } = self;
        versions.finish(tx, vintage).await?;
        let quotes = batch
            .values()
            .flat_map(|days| days.values())
            .map(Vec::len)
            .sum();
        let mut changes = quote_day_changes(&batch, &replaced);
        // The later days the batch left in place count too; their quotes are read from
        // the table, the batch's own are in memory.
        let mut kept = kept_quotes(tx, &batch, open_days).await?;
        let (from, composite_from) = recalculated_from(&batch, composites);
        let starts = starting_points(tx, &from).await?;

        let mut rows = Vec::new();
        for (code, mut days) in batch {
            days.append(&mut kept.remove(&code).unwrap_or_default());
            let (base, previous) = start_of(&starts, &code)?;
            rows.extend(index_rows(&code, base, previous, days)?);
        }
        let mut daily = DailyVersions::new(delete_daily(tx, &from).await?);
        write_daily(tx, &mut daily, vintage, &mut changes, &rows).await?;
        let mut daily_rows = rows.len();
        for (composite, first) in composite_from {
            let (base, previous) = start_of(&starts, &composite.code)?;
            let previous = previous.map(|p| p.index_value);
            let rows = composite_rows(tx, composite, first, base, previous).await?;
            write_daily(tx, &mut daily, vintage, &mut changes, &rows).await?;
            daily_rows += rows.len();
        }
        daily.finish(tx, vintage).await?;
        // Every recalculated index is listed, also one left unchanged.
        for code in from.keys() {
            changes.entry(code.clone()).or_insert_with(|| IndexChanges {
                index_code: code.clone(),
                ..IndexChanges::default()
            });
        }
        Ok(Recalculated {
            quotes,
            daily_rows,
            from,
            changes: changes.into_values().collect(),
        })
    }
}

/// Per index of the batch, how many quote days it added and how many it replaced.
fn quote_day_changes(
    batch: &QuotesByDay,
    replaced: &BTreeMap<String, usize>,
) -> BTreeMap<String, IndexChanges> {
    batch
        .iter()
        .map(|(code, days)| {
            let replaced = replaced.get(code).copied().unwrap_or(0);
            let counts = IndexChanges {
                index_code: code.clone(),
                quote_days_added: days.len().saturating_sub(replaced),
                quote_days_replaced: replaced,
                ..IndexChanges::default()
            };
            (code.clone(), counts)
        })
        .collect()
}

/// The day each index is recalculated from: its earliest day in the batch, and for
/// each composite the earliest of its bases' (the composites, with that day, listed
/// apart too).
fn recalculated_from<'c>(
    batch: &QuotesByDay,
    composites: &'c [Composite],
) -> (BTreeMap<String, NaiveDate>, Vec<(&'c Composite, NaiveDate)>) {
    let mut from: BTreeMap<String, NaiveDate> = batch
        .iter()
        .filter_map(|(code, days)| Some((code.clone(), *days.keys().next()?)))
        .collect();
    let composite_from: Vec<(&Composite, NaiveDate)> = composites
        .iter()
        .filter_map(|composite| {
            let first = from
                .iter()
                .filter(|(code, _)| composite.bases.contains(code))
                .map(|(_, from)| *from)
                .min()?;
            Some((composite, first))
        })
        .collect();
    for (composite, first) in &composite_from {
        from.insert(composite.code.clone(), *first);
    }
    (from, composite_from)
}
