//! The transactional write path of quotes: replace the (date, index) days a batch
//! contains, then recalculate `index_daily` from the earliest affected date onward for
//! each affected index and for the composite (D8). Callers pass an open transaction and
//! commit it; a failure leaves no trace.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Transaction;

use super::history::{DailyBefore, DailyVersion, DailyVersions, QuoteVersions};
use super::recalc::{chain_index, composite_index, weighted_price, DailyRow, Previous, QuoteRow};
use crate::db::{self, Traced};
use crate::{ApiError, ErrorCode};

/// A composite index and the base indexes it is derived from, with their weights (D8:
/// the six public indexes but the rental one, equal weights by default), as the
/// `composite_bases` table holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct Composite {
    pub code: String,
    /// Base index codes, in a fixed order (by code).
    pub bases: Vec<String>,
    /// The weight of each base, in the order of `bases`.
    pub weights: Vec<Decimal>,
}

/// Every composite index with its bases.
pub async fn composites(client: &impl Traced) -> Result<Vec<Composite>, ApiError> {
    let rows = client
        .query_named(
            "recalc.read_composites",
            "SELECT composite_code, base_code, weight FROM composite_bases \
             ORDER BY composite_code, base_code",
            &[],
        )
        .await?;
    let mut composites: Vec<Composite> = Vec::new();
    for row in &rows {
        let code: String = row.try_get("composite_code")?;
        if composites.last().is_none_or(|c| c.code != code) {
            composites.push(Composite {
                code,
                bases: Vec::new(),
                weights: Vec::new(),
            });
        }
        if let Some(composite) = composites.last_mut() {
            composite.bases.push(row.try_get("base_code")?);
            composite.weights.push(row.try_get("weight")?);
        }
    }
    Ok(composites)
}

/// What a write changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recalculated {
    pub quotes: usize,
    pub daily_rows: usize,
    /// Earliest recalculated date of each index.
    pub from: BTreeMap<String, NaiveDate>,
    /// What changed for each recalculated index (the composite included), by code.
    pub changes: Vec<IndexChanges>,
}

/// What one write changed for one index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexChanges {
    pub index_code: String,
    /// Days of quotes of the index the batch held that had none before.
    pub quote_days_added: usize,
    /// Days of quotes of the index the batch replaced (whatever their new values).
    pub quote_days_replaced: usize,
    /// `index_daily` rows of the index written that did not exist before.
    pub daily_rows_added: usize,
    /// `index_daily` rows of the index that existed and now hold another value in any
    /// column (rows rewritten with the same values are not counted).
    pub daily_rows_revised: usize,
}

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
        let versioned: Vec<(&QuoteRow, &i64)> = rows.iter().zip(&vintages).collect();
        copy_in(
            tx,
            "imports.copy_quotes",
            "COPY index_quotes (trade_date, index_code, specification, weight, price, vintage) \
             FROM STDIN (FORMAT binary)",
            &[
                Type::DATE,
                Type::TEXT,
                Type::TEXT,
                Type::NUMERIC,
                Type::NUMERIC,
                Type::INT8,
            ],
            &versioned,
            |(r, vintage)| {
                [
                    &r.trade_date,
                    &r.index_code,
                    &r.specification,
                    &r.weight,
                    &r.price,
                    *vintage,
                ]
            },
        )
        .await?;
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
        let mut changes: BTreeMap<String, IndexChanges> = batch
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
            .collect();
        // The later days the batch left in place count too; their quotes are read from
        // the table, the batch's own are in memory.
        let mut kept = kept_quotes(tx, &batch, open_days).await?;
        let mut from: BTreeMap<String, NaiveDate> = batch
            .iter()
            .filter_map(|(code, days)| Some((code.clone(), *days.keys().next()?)))
            .collect();
        // Each composite is recalculated from the earliest date any of its bases is.
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

/// Each index's base value and its last stored row before the recalculated range.
type Starts = BTreeMap<String, (Decimal, Option<Previous>)>;

/// The starting point of each index in `from`, in one statement.
async fn starting_points(
    tx: &Transaction<'_>,
    from: &BTreeMap<String, NaiveDate>,
) -> Result<Starts, ApiError> {
    let (codes, froms): (Vec<&str>, Vec<NaiveDate>) =
        from.iter().map(|(c, d)| (c.as_str(), *d)).unzip();
    let rows = tx
        .query_named(
            "recalc.starting_points",
            "SELECT i.index_code, i.base_value, p.index_value, p.weighted_price \
             FROM UNNEST($1::text[], $2::date[]) AS f(index_code, from_date) \
             JOIN indexes i ON i.index_code = f.index_code \
             LEFT JOIN LATERAL (SELECT d.index_value, d.weighted_price FROM index_daily d \
                                WHERE d.index_code = f.index_code AND d.trade_date < f.from_date \
                                ORDER BY d.trade_date DESC LIMIT 1) p ON true",
            &[&codes, &froms],
        )
        .await?;
    let mut starts = Starts::new();
    for r in &rows {
        let index_value: Option<Decimal> = r.try_get("index_value")?;
        let previous = match index_value {
            Some(index_value) => Some(Previous {
                index_value,
                weighted_price: r.try_get("weighted_price")?,
            }),
            None => None,
        };
        starts.insert(
            r.try_get("index_code")?,
            (r.try_get("base_value")?, previous),
        );
    }
    Ok(starts)
}

fn start_of(starts: &Starts, index_code: &str) -> Result<(Decimal, Option<Previous>), ApiError> {
    starts.get(index_code).copied().ok_or_else(|| {
        ApiError::new(
            ErrorCode::ImportRejected,
            format!("unknown index_code '{index_code}'"),
        )
    })
}

/// Quotes by index and day: (weight, price) of each specification.
type QuotesByDay = BTreeMap<String, BTreeMap<NaiveDate, Vec<(Decimal, Decimal)>>>;

/// The stored quotes of each index of the batch on the days the batch left in place,
/// from its earliest replaced day on.
///
/// Quotes lie only on open days (D8; a calendar change cannot close a day that holds
/// quotes), so those days are the open days between the batch's first and last day of
/// the index that the batch has not, and every day after its last. Asking for exactly
/// those never touches the batch's own rows, which are already in the table.
async fn kept_quotes(
    tx: &Transaction<'_>,
    batch: &QuotesByDay,
    open_days: &BTreeSet<NaiveDate>,
) -> Result<QuotesByDay, ApiError> {
    let mut codes = Vec::new();
    let mut lasts = Vec::new();
    let mut gap_codes = Vec::new();
    let mut gap_dates = Vec::new();
    for (code, days) in batch {
        let (Some(first), Some(last)) = (days.keys().next(), days.keys().next_back()) else {
            continue;
        };
        codes.push(code.as_str());
        lasts.push(*last);
        for day in open_days.range(first..=last) {
            if !days.contains_key(day) {
                gap_codes.push(code.as_str());
                gap_dates.push(*day);
            }
        }
    }
    let rows = tx
        .query_named(
            "recalc.read_quotes",
            "SELECT q.index_code, q.trade_date, q.weight, q.price FROM index_quotes q \
             JOIN UNNEST($1::text[], $2::date[]) AS f(index_code, last_date) \
               ON q.index_code = f.index_code AND q.trade_date > f.last_date \
             UNION ALL \
             SELECT q.index_code, q.trade_date, q.weight, q.price FROM index_quotes q \
             JOIN UNNEST($3::text[], $4::date[]) AS g(index_code, trade_date) \
               ON q.index_code = g.index_code AND q.trade_date = g.trade_date",
            &[&codes, &lasts, &gap_codes, &gap_dates],
        )
        .await?;
    let mut quotes = QuotesByDay::new();
    for q in &rows {
        quotes
            .entry(q.try_get("index_code")?)
            .or_default()
            .entry(q.try_get("trade_date")?)
            .or_default()
            .push((q.try_get("weight")?, q.try_get("price")?));
    }
    Ok(quotes)
}

/// The rows of `index_code` from its first quoted day in `by_day` on, given its quotes
/// of every day from then.
fn index_rows(
    index_code: &str,
    base: Decimal,
    previous: Option<Previous>,
    by_day: BTreeMap<NaiveDate, Vec<(Decimal, Decimal)>>,
) -> Result<Vec<DailyRow>, ApiError> {
    let mut days = Vec::with_capacity(by_day.len());
    for (date, quotes) in by_day {
        let wp = weighted_price(quotes).ok_or_else(|| {
            ApiError::new(
                ErrorCode::ImportRejected,
                format!("weighted price of {index_code} on {date} is out of range"),
            )
        })?;
        days.push((date, wp));
    }
    chain_index(index_code, base, previous, &days)
}

/// The composite's rows from `from` on, from the base indexes' stored daily changes
/// (the recalculated ones included: they are written first).
async fn composite_rows(
    tx: &Transaction<'_>,
    composite: &Composite,
    from: NaiveDate,
    base: Decimal,
    previous: Option<Decimal>,
) -> Result<Vec<DailyRow>, ApiError> {
    let bases = &composite.bases;
    let rows = tx
        .query_named(
            "recalc.read_base_daily",
            "SELECT trade_date, index_code, pct_change FROM index_daily \
             WHERE index_code = ANY($1) AND trade_date >= $2",
            &[bases, &from],
        )
        .await?;
    let mut by_day: BTreeMap<NaiveDate, Vec<Option<Option<Decimal>>>> = BTreeMap::new();
    for r in &rows {
        let code: String = r.try_get("index_code")?;
        let Some(position) = bases.iter().position(|b| *b == code) else {
            continue;
        };
        let slots = by_day
            .entry(r.try_get("trade_date")?)
            .or_insert_with(|| vec![None; bases.len()]);
        slots[position] = Some(r.try_get("pct_change")?);
    }
    // Only dates on which every base index has a value take part.
    let days: Vec<(NaiveDate, Vec<Option<Decimal>>)> = by_day
        .into_iter()
        .filter_map(|(date, slots)| Some((date, slots.into_iter().collect::<Option<Vec<_>>>()?)))
        .collect();
    composite_index(&composite.code, base, previous, &composite.weights, &days)
}

/// Deletes the daily rows of each index in `from` from its date on; answers them.
async fn delete_daily(
    tx: &Transaction<'_>,
    from: &BTreeMap<String, NaiveDate>,
) -> Result<DailyBefore, ApiError> {
    let (codes, froms): (Vec<&str>, Vec<NaiveDate>) =
        from.iter().map(|(c, d)| (c.as_str(), *d)).unzip();
    let rows = tx
        .query_named(
            "recalc.delete_daily",
            "DELETE FROM index_daily d \
             USING UNNEST($1::text[], $2::date[]) AS f(index_code, from_date) \
             WHERE d.index_code = f.index_code AND d.trade_date >= f.from_date \
             RETURNING d.trade_date, d.index_code, d.index_value, d.weighted_price, \
                       d.pre_value, d.change, d.pct_change, d.vintage",
            &[&codes, &froms],
        )
        .await?;
    let mut before = DailyBefore::with_capacity(rows.len());
    for r in &rows {
        before.insert(
            (r.try_get("index_code")?, r.try_get("trade_date")?),
            (
                (
                    r.try_get("index_value")?,
                    r.try_get("weighted_price")?,
                    r.try_get("pre_value")?,
                    r.try_get("change")?,
                    r.try_get("pct_change")?,
                ),
                r.try_get("vintage")?,
            ),
        );
    }
    Ok(before)
}

/// Writes recalculated daily rows, each with its vintage, and counts each as added (no
/// row before) or revised (a row before with another value; decimals compare by value,
/// so `1.5` equals `1.500000`).
async fn write_daily(
    tx: &Transaction<'_>,
    daily: &mut DailyVersions,
    vintage: i64,
    changes: &mut BTreeMap<String, IndexChanges>,
    rows: &[DailyRow],
) -> Result<(), ApiError> {
    let versions = daily.assign(rows, vintage);
    for (row, (_, version)) in rows.iter().zip(&versions) {
        let counts = changes
            .entry(row.index_code.clone())
            .or_insert_with(|| IndexChanges {
                index_code: row.index_code.clone(),
                ..IndexChanges::default()
            });
        match version {
            DailyVersion::Added => counts.daily_rows_added += 1,
            DailyVersion::Revised => counts.daily_rows_revised += 1,
            DailyVersion::Unchanged => {}
        }
    }
    let versioned: Vec<(&DailyRow, &i64)> =
        rows.iter().zip(versions.iter().map(|(v, _)| v)).collect();
    copy_in(
        tx,
        "recalc.copy_daily",
        "COPY index_daily (trade_date, index_code, index_value, weighted_price, \
         pre_value, change, pct_change, vintage) FROM STDIN (FORMAT binary)",
        &[
            Type::DATE,
            Type::TEXT,
            Type::NUMERIC,
            Type::NUMERIC,
            Type::NUMERIC,
            Type::NUMERIC,
            Type::NUMERIC,
            Type::INT8,
        ],
        &versioned,
        |(r, vintage)| {
            [
                &r.trade_date,
                &r.index_code,
                &r.index_value,
                &r.weighted_price,
                &r.pre_value,
                &r.change,
                &r.pct_change,
                *vintage,
            ]
        },
    )
    .await
}

/// Writes `rows` with a binary `COPY ... FROM STDIN`: the cheapest way into a table
/// with keys. The rows are already validated, so nothing is gained by a statement that
/// could reject them one by one. `name` labels the whole copy, start to finish.
pub(crate) async fn copy_in<'a, T, const N: usize>(
    tx: &Transaction<'_>,
    name: &'static str,
    statement: &str,
    types: &[Type; N],
    rows: &'a [T],
    fields: impl Fn(&'a T) -> [&'a (dyn ToSql + Sync); N],
) -> Result<(), ApiError> {
    db::traced(name, async {
        let sink = tx.copy_in(statement).await?;
        let writer = BinaryCopyInWriter::new(sink, types);
        futures_util::pin_mut!(writer);
        for row in rows {
            writer.as_mut().write(&fields(row)).await?;
        }
        let written = writer.finish().await?;
        Ok((written, ()))
    })
    .await?;
    Ok(())
}
