//! The statements of a recalculation, one function each: where each index starts (its
//! base value and last row before the range), the quotes a batch left in place, the
//! composite's inputs, and `index_daily` deleted from the range on and written anew
//! with each row's vintage and what it changed.
//!
//! Called by `QuoteWriter::recalculate` (the writer) in its order; the values come
//! from the pure `quotes::recalc`. This must never decide which indexes or dates are
//! recalculated (the writer does), nor commit.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use rust_decimal::Decimal;
use tokio_postgres::Transaction;

use super::changes::IndexChanges;
use super::composites::Composite;
use super::copy_in::copy_rows;
use crate::db::Traced;
use crate::quotes::history::{DailyBefore, DailyVersion, DailyVersions};
use crate::quotes::recalc::{composite_index, ratio_index, weighted_price, DailyRow, Previous};
use crate::{ApiError, ErrorCode};

/// Each index's base value and, when the range starts after its base day, its last
/// stored value before the range and its base day's weighted price.
pub(super) type Starts = BTreeMap<String, (Decimal, Option<Previous>)>;

/// The starting point of each index in `from`, in one statement.
pub(super) async fn starting_points(
    tx: &Transaction<'_>,
    from: &BTreeMap<String, NaiveDate>,
) -> Result<Starts, ApiError> {
    let (codes, froms): (Vec<&str>, Vec<NaiveDate>) =
        from.iter().map(|(c, d)| (c.as_str(), *d)).unzip();
    let rows = tx
        .query_named(
            "recalc.starting_points",
            "SELECT i.index_code, i.base_value, p.index_value, \
                    (SELECT b.weighted_price FROM index_daily b \
                     WHERE b.index_code = f.index_code \
                     ORDER BY b.trade_date LIMIT 1) AS base_weighted_price \
             FROM UNNEST($1::text[], $2::date[]) AS f(index_code, from_date) \
             JOIN indexes i ON i.index_code = f.index_code \
             LEFT JOIN LATERAL (SELECT d.index_value FROM index_daily d \
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
                base_weighted_price: r.try_get("base_weighted_price")?,
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

pub(super) fn start_of(
    starts: &Starts,
    index_code: &str,
) -> Result<(Decimal, Option<Previous>), ApiError> {
    starts.get(index_code).copied().ok_or_else(|| {
        ApiError::new(
            ErrorCode::ImportRejected,
            format!("unknown index_code '{index_code}'"),
        )
    })
}

/// Quotes by index and day: (weight, price) of each specification.
pub(super) type QuotesByDay = BTreeMap<String, BTreeMap<NaiveDate, Vec<(Decimal, Decimal)>>>;

/// The stored quotes of each index of the batch on the days the batch left in place,
/// from its earliest replaced day on.
///
/// Quotes lie only on open days (D8; a calendar change cannot close a day that holds
/// quotes), so those days are the open days between the batch's first and last day of
/// the index that the batch has not, and every day after its last. Asking for exactly
/// those never touches the batch's own rows, which are already in the table.
pub(super) async fn kept_quotes(
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
pub(super) fn index_rows(
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
    ratio_index(index_code, base, previous, &days)
}

/// The composite's rows from `from` on, from the base indexes' stored daily changes
/// (the recalculated ones included: they are written first).
pub(super) async fn composite_rows(
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
pub(super) async fn delete_daily(
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
pub(super) async fn write_daily(
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
    let versioned: Vec<(&DailyRow, i64)> =
        rows.iter().zip(versions.iter().map(|(v, _)| *v)).collect();
    copy_rows(tx, "recalc.copy_daily", &versioned, None).await
}
