//! Rows into a table by binary `COPY ... FROM STDIN`: the quotes and daily rows of a
//! write, and the history rows of point-in-time (`quotes::history`).
//!
//! It must never be given rows that still need checking: a `COPY` fails whole, with
//! no row-by-row reason to show a client.

use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Transaction;

use crate::db;
use crate::ApiError;

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
