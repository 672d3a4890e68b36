//! The record of an import: one `imports` row per attempt (accepted, rejected or
//! failed, with a refusal's listed problems) and, for an accepted one, its changes per
//! index in `import_changes`.
//!
//! Only writes, on the connection or transaction the caller passes: an accepted
//! import's record commits with its data, a refusal's on a connection of its own. This
//! must never decide what an import's outcome is; it writes down what it is told.

use chrono::{DateTime, Utc};

use super::{ImportOutcome, Source};
use crate::caller::Account;
use crate::db::Traced;
use crate::imports::validate::RowError;
use crate::quotes::store::IndexChanges;
use crate::ApiError;

/// What the record of an attempt says about its result.
pub(super) struct Summary<'a> {
    pub(super) errors: usize,
    pub(super) message: String,
    /// A refused import's listed problems (stored as `row_errors`); `None` when accepted.
    pub(super) row_errors: Option<&'a [RowError]>,
}

impl Summary<'_> {
    pub(super) fn accepted(outcome: &ImportOutcome) -> Summary<'static> {
        Summary {
            errors: 0,
            message: format!(
                "{} quotes stored, {} daily rows recalculated",
                outcome.quotes, outcome.daily_rows
            ),
            row_errors: None,
        }
    }
}

/// An accepted import's changes per index, beside its record.
pub(super) async fn record_changes(
    client: &impl Traced,
    import_id: i64,
    changes: &[IndexChanges],
) -> Result<(), ApiError> {
    let number = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    let codes: Vec<&str> = changes.iter().map(|c| c.index_code.as_str()).collect();
    let column = |f: fn(&IndexChanges) -> usize| -> Vec<i32> {
        changes.iter().map(|c| number(f(c))).collect()
    };
    client
        .execute_named(
            "imports.record_changes",
            "INSERT INTO import_changes (import_id, index_code, quote_days_added, \
                                         quote_days_replaced, daily_rows_added, \
                                         daily_rows_revised) \
             SELECT $1, * FROM UNNEST($2::text[], $3::int[], $4::int[], $5::int[], $6::int[])",
            &[
                &import_id,
                &codes,
                &column(|c| c.quote_days_added),
                &column(|c| c.quote_days_replaced),
                &column(|c| c.daily_rows_added),
                &column(|c| c.daily_rows_revised),
            ],
        )
        .await?;
    Ok(())
}

/// Writes the `imports` row of one attempt; answers its id.
#[allow(clippy::too_many_arguments)]
pub(super) async fn record(
    client: &impl Traced,
    by: Option<&Account>,
    source: Source,
    file_name: &str,
    rows: usize,
    result: &str,
    summary: &Summary<'_>,
    started: DateTime<Utc>,
    finished: DateTime<Utc>,
) -> Result<i64, ApiError> {
    let row_errors = summary
        .row_errors
        .map(serde_json::to_string)
        .transpose()
        .map_err(ApiError::internal)?;
    Ok(client
        .query_value_named(
            "imports.record",
            "INSERT INTO imports (user_id, source, file_name, rows, result, errors, message, \
                                  started_at, finished_at, row_errors) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::jsonb) RETURNING import_id",
            &[
                &by.map(|a| a.user_id),
                &source.as_str(),
                &file_name,
                &i32::try_from(rows).unwrap_or(i32::MAX),
                &result,
                &i32::try_from(summary.errors).unwrap_or(i32::MAX),
                &summary.message,
                &started,
                &finished,
                &row_errors,
            ],
        )
        .await?)
}
