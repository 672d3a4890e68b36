//! One import, start to end: read the file, then in one transaction check the rules
//! against the calendar and index list as they are, replace the quotes, recalculate
//! `index_daily`, record the import and announce the change (D8). A rejected or failed
//! import changes no market data; it is recorded too, so the back office sees every
//! attempt.
//!
//! Imports never interleave: the transaction takes a database-wide advisory lock, and a
//! second import while one runs is refused (409 / 40901) rather than queued behind a
//! long recalculation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool_postgres::Pool;
use serde::Serialize;
use tokio_postgres::Transaction;
use tracing::Instrument;

use super::validate::{validate, Reference};
use super::workbook::{self, FileKind, Sheet};
use crate::accounts::Accounts;
use crate::caller::Account;
use crate::changes::{Change, ChangeBus};
use crate::clock::Clock;
use crate::db::Traced;
use crate::metrics::{metrics, ImportLabels};
use crate::quotes::store::replace_quotes;
use crate::{ApiError, ErrorCode};

/// Any key unique to imports; held for the import's transaction.
const IMPORT_LOCK: i64 = 0x1A5E_0002;
/// A large workbook's recalculation may take longer than a query may.
const IMPORT_STATEMENT_TIMEOUT: &str = "SET LOCAL statement_timeout = '300s'";

/// Where an import came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `POST /api/v1/admin/imports`.
    Http,
    /// `iq-service import FILE`.
    Command,
    /// The demo data set, written as a workbook and imported at first start.
    Demo,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Http => "http",
            Source::Command => "command",
            Source::Demo => "demo",
        }
    }
}

/// An accepted import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportOutcome {
    pub import_id: String,
    pub file_name: String,
    /// Quote rows stored.
    pub quotes: usize,
    /// `index_daily` rows written by the recalculation.
    pub daily_rows: usize,
    /// The earliest recalculated date of each index (`YYYYMMDD`).
    pub recalculated_from: BTreeMap<String, String>,
}

/// An import as `GET /api/v1/admin/imports` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ImportRecord {
    pub id: String,
    /// Who imported it; `null` for the command line and the demo data.
    pub username: Option<String>,
    pub source: String,
    pub file_name: String,
    /// Data rows in the file (header excluded).
    pub rows: i32,
    /// `accepted`, `rejected` or `failed`.
    pub result: String,
    /// Problems listed when rejected.
    pub errors: i32,
    pub message: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
}

/// What an import needs, without the HTTP service around it: the ops command builds
/// one from a pool alone.
#[derive(Clone)]
pub struct Importer {
    pub pool: Pool,
    pub clock: Arc<dyn Clock>,
    pub bus: ChangeBus,
}

impl Importer {
    /// Imports `bytes` as the file `file_name`; `progress` hears each stage. The whole
    /// import is one `import` span (its statements are children) and one sample of
    /// `iq_import_duration_seconds`.
    pub async fn import(
        &self,
        by: Option<&Account>,
        source: Source,
        file_name: &str,
        bytes: Vec<u8>,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<ImportOutcome, ApiError> {
        let span = tracing::info_span!(
            "import",
            file_name,
            source = source.as_str(),
            quotes = tracing::field::Empty,
            result = tracing::field::Empty,
        );
        let timer = Instant::now();
        let result = self
            .attempt(by, source, file_name, bytes, progress)
            .instrument(span.clone())
            .await;
        let label = match &result {
            Ok(_) => "accepted",
            Err(error) => Self::failure_kind(error),
        };
        let m = metrics();
        m.imports
            .get_or_create(&ImportLabels { result: label })
            .observe(timer.elapsed().as_secs_f64());
        if let Ok(outcome) = &result {
            m.import_rows.inc_by(outcome.quotes as u64);
            span.record("quotes", outcome.quotes);
        }
        span.record("result", label);
        result
    }

    fn failure_kind(error: &ApiError) -> &'static str {
        match error.code {
            ErrorCode::Internal => "failed",
            _ => "rejected",
        }
    }

    async fn attempt(
        &self,
        by: Option<&Account>,
        source: Source,
        file_name: &str,
        bytes: Vec<u8>,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<ImportOutcome, ApiError> {
        let started = self.clock.now();
        let attempt = async {
            let kind = FileKind::of_name(file_name).ok_or_else(|| {
                ApiError::invalid(format!(
                    "'{file_name}' is neither a .xlsx workbook nor a .csv file"
                ))
            })?;
            progress(&format!("reading {file_name} ({} bytes)", bytes.len()));
            let sheet = tokio::task::spawn_blocking(move || workbook::read(kind, &bytes))
                .await
                .map_err(ApiError::internal)??;
            let rows = sheet.rows.len().saturating_sub(1);
            progress(&format!("{rows} rows read; validating"));
            Ok::<_, ApiError>((sheet, rows))
        };
        let (sheet, rows) = match attempt.await {
            Ok(read) => read,
            Err(error) => {
                self.record_failure(by, source, file_name, 0, started, &error)
                    .await;
                return Err(error);
            }
        };
        let written = self
            .bus
            .write(&self.pool, Change::Data, async |tx| {
                let outcome = store(tx, &sheet, file_name, progress).await?;
                let id = record(
                    tx,
                    by,
                    source,
                    file_name,
                    rows,
                    "accepted",
                    &Summary::accepted(&outcome),
                    started,
                    self.clock.now(),
                )
                .await?;
                Ok(ImportOutcome {
                    import_id: id.to_string(),
                    ..outcome
                })
            })
            .await;
        if let Err(error) = &written {
            self.record_failure(by, source, file_name, rows, started, error)
                .await;
        }
        written
    }

    /// Records a refused or failed attempt; a failure to record is logged, not raised
    /// (the client's answer is the import's error).
    async fn record_failure(
        &self,
        by: Option<&Account>,
        source: Source,
        file_name: &str,
        rows: usize,
        started: DateTime<Utc>,
        error: &ApiError,
    ) {
        let result = Self::failure_kind(error);
        let summary = Summary {
            errors: error.errors.len(),
            message: error.message.clone(),
        };
        let recorded = async {
            let client = self.pool.get().await?;
            let now = self.clock.now();
            record(
                &**client, by, source, file_name, rows, result, &summary, started, now,
            )
            .await
        }
        .await;
        if let Err(err) = recorded {
            tracing::warn!(error = %err.message, "could not record a refused import");
        }
    }

    /// The latest imports, newest first.
    pub async fn list(&self, limit: i64) -> Result<Vec<ImportRecord>, ApiError> {
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "imports.list",
                "SELECT i.import_id, u.username, i.source, i.file_name, i.rows, i.result, \
                        i.errors, i.message, i.started_at, i.finished_at \
                 FROM imports i LEFT JOIN users u USING (user_id) \
                 ORDER BY i.import_id DESC LIMIT $1",
                &[&limit],
            )
            .await?;
        rows.iter()
            .map(|row| {
                Ok(ImportRecord {
                    id: row.try_get::<_, i64>(0)?.to_string(),
                    username: row.try_get(1)?,
                    source: row.try_get(2)?,
                    file_name: row.try_get(3)?,
                    rows: row.try_get(4)?,
                    result: row.try_get(5)?,
                    errors: row.try_get(6)?,
                    message: row.try_get(7)?,
                    started_at: row.try_get(8)?,
                    finished_at: row.try_get(9)?,
                })
            })
            .collect()
    }
}

/// Validates against the database's calendar and indexes, then stores and recalculates.
async fn store(
    tx: &Transaction<'_>,
    sheet: &Sheet,
    file_name: &str,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<ImportOutcome, ApiError> {
    tx.batch_execute_named("imports.set_timeout", IMPORT_STATEMENT_TIMEOUT)
        .await?;
    let locked: bool = tx
        .query_one_named(
            "imports.try_lock",
            "SELECT pg_try_advisory_xact_lock($1)",
            &[&IMPORT_LOCK],
        )
        .await?
        .try_get(0)?;
    if !locked {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "another import is running; try again when it has finished",
        ));
    }
    let quote_indexes: BTreeSet<String> = tx
        .query_named(
            "imports.read_indexes",
            "SELECT index_code FROM indexes WHERE has_quotes",
            &[],
        )
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    // A calendar change waits for this import (and this import for it): no quote can
    // land on a day closed between this read and the commit. Calendar, then data, is
    // the lock order of both.
    tx.batch_execute_named(
        "imports.lock_calendar",
        "LOCK TABLE trade_calendar IN SHARE MODE",
    )
    .await?;
    let open_days: BTreeSet<NaiveDate> = tx
        .query_named(
            "imports.read_calendar",
            "SELECT trade_date FROM trade_calendar",
            &[],
        )
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    let reference = Reference {
        quote_indexes: &quote_indexes,
        open_days: &open_days,
    };
    let quotes = validate(sheet, reference).map_err(ApiError::rejected)?;
    progress(&format!(
        "{} quotes valid; replacing them and recalculating",
        quotes.len()
    ));
    let recalculated = replace_quotes(tx, &quotes).await?;
    progress(&format!(
        "{} quotes stored, {} daily rows recalculated",
        recalculated.quotes, recalculated.daily_rows
    ));
    Ok(ImportOutcome {
        import_id: String::new(),
        file_name: file_name.to_string(),
        quotes: recalculated.quotes,
        daily_rows: recalculated.daily_rows,
        recalculated_from: recalculated
            .from
            .iter()
            .map(|(code, date)| (code.clone(), date.format("%Y%m%d").to_string()))
            .collect(),
    })
}

struct Summary {
    errors: usize,
    message: String,
}

impl Summary {
    fn accepted(outcome: &ImportOutcome) -> Summary {
        Summary {
            errors: 0,
            message: format!(
                "{} quotes stored, {} daily rows recalculated",
                outcome.quotes, outcome.daily_rows
            ),
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn record(
    client: &impl Traced,
    by: Option<&Account>,
    source: Source,
    file_name: &str,
    rows: usize,
    result: &str,
    summary: &Summary,
    started: DateTime<Utc>,
    finished: DateTime<Utc>,
) -> Result<i64, ApiError> {
    let row = client
        .query_one_named(
            "imports.record",
            "INSERT INTO imports (user_id, source, file_name, rows, result, errors, message, \
                                  started_at, finished_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING import_id",
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
            ],
        )
        .await?;
    Ok(row.try_get(0)?)
}

impl Accounts {
    fn importer(&self) -> Importer {
        Importer {
            pool: self.pool.clone(),
            clock: self.clock.clone(),
            bus: self.bus.clone(),
        }
    }

    /// `POST /api/v1/admin/imports`.
    pub async fn import(
        &self,
        by: &Account,
        file_name: &str,
        bytes: Vec<u8>,
    ) -> Result<ImportOutcome, ApiError> {
        let progress = |stage: &str| tracing::info!(stage, "import");
        self.importer()
            .import(Some(by), Source::Http, file_name, bytes, &progress)
            .await
    }

    /// `GET /api/v1/admin/imports`.
    pub async fn imports(&self, limit: i64) -> Result<Vec<ImportRecord>, ApiError> {
        self.importer().list(limit).await
    }
}
