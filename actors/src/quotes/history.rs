//! Point-in-time history (D17): vintages and the rows they superseded.
//!
//! An import takes the next vintage number under the import lock, writes its rows with
//! it, moves what it replaced with other values (or dropped) to the `_history` tables,
//! and publishes the vintage as its last statement. This module decides, row by row,
//! whether a rewritten row is a new version, and writes history; it never deletes
//! history and never touches rows the import did not replace.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use tokio_postgres::Transaction;

use super::recalc::{DailyRow, QuoteRow};
use super::store::copy_rows;
use crate::db::Traced;
use crate::ApiError;

/// The next vintage number. Called under the import lock, so numbers are in the order
/// the vintages are published in.
pub async fn next_vintage(tx: &Transaction<'_>) -> Result<i64, ApiError> {
    Ok(tx
        .query_value_named(
            "history.next_vintage",
            "SELECT nextval('vintage_numbers')",
            &[],
        )
        .await?)
}

/// Publishes `vintage` as the work of accepted import `import_id` (none for a
/// restatement), for `reason` (D26; none given: NULL): the writer's last statement, so
/// `published_at` is the instant it commits (to within the commit itself). Never
/// earlier than a vintage already published, whatever the clock does.
///
/// The same statement lists the vintage's revisions (D21), each with the reason: each
/// daily row it superseded and replaced, with the instants of both values. Rows it
/// dropped without a replacement are history but not revisions.
pub async fn publish(
    tx: &Transaction<'_>,
    vintage: i64,
    import_id: Option<i64>,
    reason: Option<&str>,
) -> Result<DateTime<Utc>, ApiError> {
    Ok(tx
        .query_value_named(
            "history.publish",
            "WITH published AS (\
               INSERT INTO vintages (vintage, import_id, published_at, reason) \
               SELECT $1, $2, greatest(clock_timestamp(), \
                                       (SELECT max(published_at) FROM vintages) \
                                         + interval '1 microsecond'), $3 \
               RETURNING published_at), \
             revised AS (\
               INSERT INTO index_revisions (published_at, index_code, trade_date, \
                 previous_published_at, previous_value, index_value, change, vintage, \
                 reason) \
               SELECT p.published_at, h.index_code, h.trade_date, pv.published_at, \
                      h.index_value, n.index_value, n.index_value - h.index_value, $1, $3 \
               FROM published p, index_daily_history h \
               JOIN index_daily n ON n.trade_date = h.trade_date \
                 AND n.index_code = h.index_code AND n.vintage = h.superseded_by \
               JOIN vintages pv ON pv.vintage = h.vintage \
               WHERE h.superseded_by = $1) \
             SELECT published_at FROM published",
            &[&vintage, &import_id, &reason],
        )
        .await?)
}

/// A (date, index, specification) quote key.
type QuoteKey = (NaiveDate, String, String);

/// A replaced quote's values and vintage.
#[derive(Debug, Clone, Copy)]
struct OldQuote {
    weight: Decimal,
    price: Decimal,
    vintage: i64,
}

/// The quotes an import replaced, matched against the ones it writes.
#[derive(Debug, Default)]
pub struct QuoteVersions {
    /// Replaced quotes not yet matched by a new one.
    old: HashMap<QuoteKey, OldQuote>,
    /// Superseded quotes, for history.
    superseded: Vec<(QuoteRow, i64)>,
    /// The (date, index) days whose quotes changed.
    changed_days: BTreeSet<(NaiveDate, String)>,
}

impl QuoteVersions {
    /// Remembers the rows a piece's deletion returned.
    pub fn replaced(&mut self, rows: &[tokio_postgres::Row]) -> Result<(), ApiError> {
        for r in rows {
            self.old.insert(
                (
                    r.try_get("trade_date")?,
                    r.try_get("index_code")?,
                    r.try_get("specification")?,
                ),
                OldQuote {
                    weight: r.try_get("weight")?,
                    price: r.try_get("price")?,
                    vintage: r.try_get("vintage")?,
                },
            );
        }
        Ok(())
    }

    /// The vintage of each new row: the replaced row's where weight and price are the
    /// same (decimals compare by value), else `vintage`. The replaced row of a changed
    /// quote goes to history.
    pub fn assign(&mut self, rows: &[QuoteRow], vintage: i64) -> Vec<i64> {
        rows.iter()
            .map(|row| {
                let key = (
                    row.trade_date,
                    row.index_code.clone(),
                    row.specification.clone(),
                );
                match self.old.remove(&key) {
                    Some(old) if old.weight == row.weight && old.price == row.price => old.vintage,
                    Some(old) => {
                        self.supersede(key, old);
                        vintage
                    }
                    None => {
                        self.changed_days
                            .insert((row.trade_date, row.index_code.clone()));
                        vintage
                    }
                }
            })
            .collect()
    }

    fn supersede(&mut self, key: QuoteKey, old: OldQuote) {
        let (trade_date, index_code, specification) = key;
        self.changed_days.insert((trade_date, index_code.clone()));
        let row = QuoteRow {
            trade_date,
            index_code,
            specification,
            weight: old.weight,
            price: old.price,
        };
        self.superseded.push((row, old.vintage));
    }

    /// After the last piece: quotes the import dropped go to history too; writes the
    /// history and the changed days.
    pub async fn finish(mut self, tx: &Transaction<'_>, vintage: i64) -> Result<(), ApiError> {
        for (key, old) in std::mem::take(&mut self.old) {
            self.supersede(key, old);
        }
        let superseded: Vec<(&QuoteRow, i64)> =
            self.superseded.iter().map(|(r, v)| (r, *v)).collect();
        copy_rows(tx, "history.copy_quotes", &superseded, Some(vintage)).await?;
        let (dates, codes): (Vec<NaiveDate>, Vec<&str>) = self
            .changed_days
            .iter()
            .map(|(d, c)| (*d, c.as_str()))
            .unzip();
        tx.execute_named(
            "history.quote_days_changed",
            "INSERT INTO quote_days_changed (vintage, trade_date, index_code) \
             SELECT $1, * FROM UNNEST($2::date[], $3::text[])",
            &[&vintage, &dates, &codes],
        )
        .await?;
        Ok(())
    }
}

/// The values of a daily row after its key: what tells a revised row from a rewritten one.
pub type DailyValues = (
    Decimal,
    Option<Decimal>,
    Option<Decimal>,
    Option<Decimal>,
    Option<Decimal>,
);

pub fn values_of(row: &DailyRow) -> DailyValues {
    (
        row.index_value,
        row.weighted_price,
        row.pre_value,
        row.change,
        row.pct_change,
    )
}

/// The daily rows a recalculation deleted, by (index, date): their values and vintage.
pub type DailyBefore = HashMap<(String, NaiveDate), (DailyValues, i64)>;

/// Whether a written daily row is new, the same as before, or revised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DailyVersion {
    Added,
    Unchanged,
    Revised,
}

/// The daily rows a recalculation replaced, matched against the ones it writes.
pub struct DailyVersions {
    before: DailyBefore,
    superseded: Vec<(DailyRow, i64)>,
}

impl DailyVersions {
    pub fn new(before: DailyBefore) -> Self {
        DailyVersions {
            before,
            superseded: Vec::new(),
        }
    }

    /// The vintage of each written row and whether it is a new version, like
    /// [`QuoteVersions::assign`].
    pub fn assign(&mut self, rows: &[DailyRow], vintage: i64) -> Vec<(i64, DailyVersion)> {
        rows.iter()
            .map(|row| {
                match self
                    .before
                    .remove(&(row.index_code.clone(), row.trade_date))
                {
                    None => (vintage, DailyVersion::Added),
                    Some((old, old_vintage)) if old == values_of(row) => {
                        (old_vintage, DailyVersion::Unchanged)
                    }
                    Some((old, old_vintage)) => {
                        self.superseded
                            .push((row_of(&row.index_code, row.trade_date, old), old_vintage));
                        (vintage, DailyVersion::Revised)
                    }
                }
            })
            .collect()
    }

    /// After the last write: rows not written again go to history too; writes it.
    pub async fn finish(mut self, tx: &Transaction<'_>, vintage: i64) -> Result<(), ApiError> {
        for ((code, date), (old, old_vintage)) in std::mem::take(&mut self.before) {
            self.superseded
                .push((row_of(&code, date, old), old_vintage));
        }
        let superseded: Vec<(&DailyRow, i64)> =
            self.superseded.iter().map(|(r, v)| (r, *v)).collect();
        copy_rows(tx, "history.copy_daily", &superseded, Some(vintage)).await
    }
}

fn row_of(index_code: &str, trade_date: NaiveDate, values: DailyValues) -> DailyRow {
    let (index_value, weighted_price, pre_value, change, pct_change) = values;
    DailyRow {
        trade_date,
        index_code: index_code.to_string(),
        index_value,
        weighted_price,
        pre_value,
        change,
        pct_change,
    }
}
