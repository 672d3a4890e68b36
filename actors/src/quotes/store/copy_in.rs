//! Quote and daily rows into their tables by binary `COPY ... FROM STDIN`: the current
//! tables (each row with its vintage) and, for point-in-time history
//! (`quotes::history`), the `_history` tables (each row also with the vintage that
//! superseded it). Each row shape and its column types are written here once.
//!
//! It must never be given rows that still need checking: a `COPY` fails whole, with
//! no row-by-row reason to show a client.

use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Transaction;

use crate::db;
use crate::quotes::recalc::{DailyRow, QuoteRow};
use crate::ApiError;

/// A row shape `COPY` writes: its table, its columns with their types, and a row's
/// values in that order (`vintage` and `superseded_by` follow, added by [`copy_rows`]).
pub(crate) trait Copied {
    /// The current table; the history table is this with `_history`.
    const TABLE: &'static str;
    /// The row's columns and their types.
    const COLUMNS: &'static [(&'static str, Type)];
    /// Appends the row's values to `out`, in [`Copied::COLUMNS`] order.
    fn values<'a>(&'a self, out: &mut Vec<&'a (dyn ToSql + Sync)>);
}

impl Copied for QuoteRow {
    const TABLE: &'static str = "index_quotes";
    const COLUMNS: &'static [(&'static str, Type)] = &[
        ("trade_date", Type::DATE),
        ("index_code", Type::TEXT),
        ("specification", Type::TEXT),
        ("weight", Type::NUMERIC),
        ("price", Type::NUMERIC),
    ];

    fn values<'a>(&'a self, out: &mut Vec<&'a (dyn ToSql + Sync)>) {
        out.extend::<[&(dyn ToSql + Sync); 5]>([
            &self.trade_date,
            &self.index_code,
            &self.specification,
            &self.weight,
            &self.price,
        ]);
    }
}

impl Copied for DailyRow {
    const TABLE: &'static str = "index_daily";
    const COLUMNS: &'static [(&'static str, Type)] = &[
        ("trade_date", Type::DATE),
        ("index_code", Type::TEXT),
        ("index_value", Type::NUMERIC),
        ("weighted_price", Type::NUMERIC),
        ("pre_value", Type::NUMERIC),
        ("change", Type::NUMERIC),
        ("pct_change", Type::NUMERIC),
    ];

    fn values<'a>(&'a self, out: &mut Vec<&'a (dyn ToSql + Sync)>) {
        out.extend::<[&(dyn ToSql + Sync); 7]>([
            &self.trade_date,
            &self.index_code,
            &self.index_value,
            &self.weighted_price,
            &self.pre_value,
            &self.change,
            &self.pct_change,
        ]);
    }
}

/// Writes `rows`, each with its vintage, into `R`'s table with a binary `COPY ... FROM
/// STDIN`: the cheapest way into a table with keys. The rows are already validated, so
/// nothing is gained by a statement that could reject them one by one. With
/// `superseded_by`, they go to `{table}_history` as superseded by that vintage. `name`
/// labels the whole copy, start to finish.
pub(crate) async fn copy_rows<R: Copied>(
    tx: &Transaction<'_>,
    name: &'static str,
    rows: &[(&R, i64)],
    superseded_by: Option<i64>,
) -> Result<(), ApiError> {
    let mut names: Vec<&str> = R::COLUMNS.iter().map(|(n, _)| *n).collect();
    let mut types: Vec<Type> = R::COLUMNS.iter().map(|(_, t)| t.clone()).collect();
    names.push("vintage");
    types.push(Type::INT8);
    let table = if superseded_by.is_some() {
        names.push("superseded_by");
        types.push(Type::INT8);
        format!("{}_history", R::TABLE)
    } else {
        R::TABLE.to_owned()
    };
    let statement = format!(
        "COPY {table} ({}) FROM STDIN (FORMAT binary)",
        names.join(", ")
    );
    db::traced(name, async {
        let sink = tx.copy_in(&statement).await?;
        let writer = BinaryCopyInWriter::new(sink, &types);
        futures_util::pin_mut!(writer);
        // One buffer for every row's values, not an allocation a row.
        let mut values: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(types.len());
        for (row, vintage) in rows {
            values.clear();
            row.values(&mut values);
            values.push(vintage);
            if let Some(superseded) = &superseded_by {
                values.push(superseded);
            }
            writer.as_mut().write(&values).await?;
        }
        let written = writer.finish().await?;
        Ok((written, ()))
    })
    .await?;
    Ok(())
}
