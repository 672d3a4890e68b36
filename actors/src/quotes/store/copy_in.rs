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

const QUOTE_COLUMNS: [(&str, Type); 6] = [
    ("trade_date", Type::DATE),
    ("index_code", Type::TEXT),
    ("specification", Type::TEXT),
    ("weight", Type::NUMERIC),
    ("price", Type::NUMERIC),
    ("vintage", Type::INT8),
];

const DAILY_COLUMNS: [(&str, Type); 8] = [
    ("trade_date", Type::DATE),
    ("index_code", Type::TEXT),
    ("index_value", Type::NUMERIC),
    ("weighted_price", Type::NUMERIC),
    ("pre_value", Type::NUMERIC),
    ("change", Type::NUMERIC),
    ("pct_change", Type::NUMERIC),
    ("vintage", Type::INT8),
];

/// Quote rows, each with its vintage, into `index_quotes`; with `superseded_by`, into
/// `index_quotes_history` as superseded by that vintage.
pub(crate) async fn copy_quotes(
    tx: &Transaction<'_>,
    name: &'static str,
    rows: &[(&QuoteRow, i64)],
    superseded_by: Option<i64>,
) -> Result<(), ApiError> {
    let superseded = superseded_by.unwrap_or_default();
    copy(
        tx,
        name,
        "index_quotes",
        &QUOTE_COLUMNS,
        superseded_by.is_some(),
        rows,
        |(r, vintage)| {
            vec![
                &r.trade_date,
                &r.index_code,
                &r.specification,
                &r.weight,
                &r.price,
                vintage,
                &superseded,
            ]
        },
    )
    .await
}

/// Daily rows, each with its vintage, into `index_daily`; with `superseded_by`, into
/// `index_daily_history` as superseded by that vintage.
pub(crate) async fn copy_daily(
    tx: &Transaction<'_>,
    name: &'static str,
    rows: &[(&DailyRow, i64)],
    superseded_by: Option<i64>,
) -> Result<(), ApiError> {
    let superseded = superseded_by.unwrap_or_default();
    copy(
        tx,
        name,
        "index_daily",
        &DAILY_COLUMNS,
        superseded_by.is_some(),
        rows,
        |(r, vintage)| {
            vec![
                &r.trade_date,
                &r.index_code,
                &r.index_value,
                &r.weighted_price,
                &r.pre_value,
                &r.change,
                &r.pct_change,
                vintage,
                &superseded,
            ]
        },
    )
    .await
}

/// Writes `rows` with a binary `COPY ... FROM STDIN`: the cheapest way into a table
/// with keys. The rows are already validated, so nothing is gained by a statement that
/// could reject them one by one. `values` gives a row's values in `columns` order,
/// then its `superseded_by`, which goes to `{table}_history` when `history` and is
/// left out otherwise. `name` labels the whole copy, start to finish.
async fn copy<'a, T>(
    tx: &Transaction<'_>,
    name: &'static str,
    table: &str,
    columns: &[(&str, Type)],
    history: bool,
    rows: &'a [T],
    values: impl Fn(&'a T) -> Vec<&'a (dyn ToSql + Sync)>,
) -> Result<(), ApiError> {
    let mut names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let mut types: Vec<Type> = columns.iter().map(|(_, t)| t.clone()).collect();
    let table = if history {
        names.push("superseded_by");
        types.push(Type::INT8);
        format!("{table}_history")
    } else {
        table.to_string()
    };
    let statement = format!(
        "COPY {table} ({}) FROM STDIN (FORMAT binary)",
        names.join(", ")
    );
    let width = types.len();
    db::traced(name, async {
        let sink = tx.copy_in(&statement).await?;
        let writer = BinaryCopyInWriter::new(sink, &types);
        futures_util::pin_mut!(writer);
        for row in rows {
            writer.as_mut().write(&values(row)[..width]).await?;
        }
        let written = writer.finish().await?;
        Ok((written, ()))
    })
    .await?;
    Ok(())
}
