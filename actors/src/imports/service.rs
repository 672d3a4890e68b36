//! One import, start to end, in one transaction: read the file, check the rules
//! against the calendar and index list as they are, replace the quotes, recalculate
//! `index_daily`, record the import and announce the change (D8). A rejected or failed
//! import changes no market data; it is recorded too, so the back office sees every
//! attempt.
//!
//! The file is read and checked on a blocking thread, which hands the valid quotes over
//! in pieces of [`PIECE_ROWS`] rows while the file so far is faultless; each piece is
//! stored at once, so parsing and checking a large workbook overlap with writing its
//! quotes. Whether the whole file is good is known only after its last row; if it is
//! not, the transaction is rolled back and the stored pieces vanish with it.
//!
//! Imports never interleave: the transaction takes a database-wide advisory lock, and a
//! second import while one runs is refused (409 / 40901) rather than queued behind a
//! long recalculation.
//!
//! Every import runs under the [`ImportLimits`] of its [`Importer`] (D8 bounds, see
//! [`super::bounds`]): a file past one is refused (400 / 40001) as it is read, and a
//! rejected one lists its first 1,000 problems and records the total count.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool_postgres::Pool;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::Transaction;
use tracing::Instrument;

use super::bounds::ImportLimits;
use super::validate::{Reference, Rejection, RowError, Validator};
use super::workbook::{self, FileKind};
use crate::caller::Account;
use crate::changes::{Change, ChangeBus};
use crate::clock::Clock;
use crate::db::Traced;
use crate::metrics::{metrics, ImportLabels};
use crate::paging::PageRequest;
use crate::quotes::history;
use crate::quotes::recalc::QuoteRow;
use crate::quotes::store::{self, IndexChanges, QuoteWriter};
use crate::wire_date::WireDate;
use crate::{ApiError, ErrorCode};

/// Any key unique to imports; held for the import's transaction.
const IMPORT_LOCK: i64 = 0x1A5E_0002;
/// A large workbook's recalculation may take longer than a query may.
const IMPORT_STATEMENT_TIMEOUT: &str = "SET LOCAL statement_timeout = '300s'";
/// Rows per piece handed from the reader to the writer: large enough that a `COPY` per
/// piece costs little, small enough that parsing and writing overlap.
pub const PIECE_ROWS: usize = 8192;
/// Pieces read ahead of the writer; bounds the memory of a fast reader.
const PIECES_AHEAD: usize = 8;
/// A progress message every so many rows, for the `import` command on large files.
const PROGRESS_ROWS: usize = 50_000;

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
    /// What changed for each recalculated index (the composite included), by code.
    pub changes: Vec<IndexChanges>,
    /// When its data was published: `as_of` this instant or later sees it (D17).
    pub published_at: Option<DateTime<Utc>>,
    /// The vintage it publishes.
    #[serde(skip)]
    pub vintage: i64,
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
    /// Problems found when rejected (all of them, listed or not).
    pub errors: i32,
    pub message: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// When an accepted import's data was published (`as_of` this instant or later
    /// sees it, D17); `null` for one not accepted or accepted before this was kept.
    pub published_at: Option<DateTime<Utc>>,
    /// Per recalculated index, by code: `[]` for an import that was not accepted (it
    /// changed nothing); `null` for an accepted one recorded before these were kept.
    pub changes: Option<Vec<IndexChanges>>,
}

/// One import as `GET /api/v1/admin/imports/{id}` shows it: its record (with what it
/// changed) and, when it was rejected, its listed problems.
#[derive(Debug, Clone, Serialize)]
pub struct ImportDetail {
    #[serde(flatten)]
    pub record: ImportRecord,
    /// The first problems of a refused file (at most 1,000, in row order, as its answer
    /// listed them): `[]` for an accepted import or a refusal not about rows; `null`
    /// for one recorded before these were kept.
    pub row_errors: Option<Vec<RowError>>,
}

/// The newest imports a list shows when the client does not say.
pub const DEFAULT_LISTED: i64 = 100;
/// The most imports one list shows.
pub const MAX_LISTED: i64 = 500;

/// The columns of [`record_of`], from `imports i` joined as [`RECORD_FROM`] says.
const RECORD_COLUMNS: &str = "i.import_id, u.username, i.source, i.file_name, i.rows, i.result, \
     i.errors, i.message, i.started_at, i.finished_at, v.published_at, \
     (SELECT json_agg(json_build_object('index_code', c.index_code, \
                      'quote_days_added', c.quote_days_added, \
                      'quote_days_replaced', c.quote_days_replaced, \
                      'daily_rows_added', c.daily_rows_added, \
                      'daily_rows_revised', c.daily_rows_revised) ORDER BY c.index_code) \
      FROM import_changes c WHERE c.import_id = i.import_id)::text AS changes";
const RECORD_FROM: &str = "imports i LEFT JOIN users u USING (user_id) \
     LEFT JOIN vintages v ON v.import_id = i.import_id";

fn record_of(row: &tokio_postgres::Row) -> Result<ImportRecord, ApiError> {
    let result: String = row.try_get("result")?;
    let changes = match row.try_get::<_, Option<String>>("changes")? {
        Some(text) => Some(serde_json::from_str(&text).map_err(ApiError::internal)?),
        // Every accepted import changes at least one index (an empty file is refused):
        // none stored means it was recorded before they were.
        None if result == "accepted" => None,
        None => Some(Vec::new()),
    };
    Ok(ImportRecord {
        id: row.try_get::<_, i64>("import_id")?.to_string(),
        username: row.try_get("username")?,
        source: row.try_get("source")?,
        file_name: row.try_get("file_name")?,
        rows: row.try_get("rows")?,
        result: row.try_get("result")?,
        errors: row.try_get("errors")?,
        message: row.try_get("message")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        published_at: row.try_get("published_at")?,
        changes,
    })
}

/// What an import needs, without the HTTP service around it: the ops command builds
/// one from a pool alone.
#[derive(Clone)]
pub struct Importer {
    pub pool: Pool,
    pub clock: Arc<dyn Clock>,
    pub bus: ChangeBus,
    /// The bounds every file is read under.
    pub limits: ImportLimits,
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
        // A file that is plainly not what its name says is refused before it takes a
        // connection and the import lock.
        let kind = FileKind::of_name(file_name)
            .ok_or_else(|| {
                ApiError::invalid(format!(
                    "'{file_name}' is neither a .xlsx workbook nor a .csv file"
                ))
            })
            .and_then(|kind| workbook::sniff(kind, &bytes).map(|()| kind));
        let kind = match kind {
            Ok(kind) => kind,
            Err(error) => {
                self.record_failure(by, source, file_name, 0, started, &error)
                    .await;
                return Err(error);
            }
        };
        progress(&format!("reading {file_name} ({} bytes)", bytes.len()));
        // Data rows read, for the record of a refused file (0 if it was never read).
        let rows = Arc::new(AtomicUsize::new(0));
        let written = self
            .bus
            .write(&self.pool, Change::Data, async |tx| {
                let file = File {
                    kind,
                    bytes,
                    limits: self.limits,
                    rows: rows.clone(),
                };
                let outcome = store(tx, file, file_name, progress).await?;
                let id = record(
                    tx,
                    by,
                    source,
                    file_name,
                    rows.load(Ordering::Relaxed),
                    "accepted",
                    &Summary::accepted(&outcome),
                    started,
                    self.clock.now(),
                )
                .await?;
                record_changes(tx, id, &outcome.changes).await?;
                // Last: its instant is the commit's.
                let published_at = history::publish(tx, outcome.vintage, id).await?;
                Ok(ImportOutcome {
                    import_id: id.to_string(),
                    published_at: Some(published_at),
                    ..outcome
                })
            })
            .await;
        if let Err(error) = &written {
            let rows = rows.load(Ordering::Relaxed);
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
            errors: error.errors_total.max(error.errors.len()),
            message: error.message.clone(),
            row_errors: Some(&error.errors),
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

    /// The latest `limit` imports (1 to [`MAX_LISTED`]), newest first.
    pub async fn list(&self, limit: i64) -> Result<Vec<ImportRecord>, ApiError> {
        let limit = limit.clamp(1, MAX_LISTED);
        let page = PageRequest::new(Some(limit), None, DEFAULT_LISTED, MAX_LISTED)?;
        self.page(page).await
    }

    /// A page of the imports, newest first (`limit` 1..=500, default 100: see
    /// [`PageRequest::new`] with [`DEFAULT_LISTED`] and [`MAX_LISTED`]).
    pub async fn page(&self, page: PageRequest) -> Result<Vec<ImportRecord>, ApiError> {
        let client = self.pool.get().await?;
        let rows = client
            .query_named(
                "imports.list",
                &format!(
                    "SELECT {RECORD_COLUMNS} FROM {RECORD_FROM} \
                     ORDER BY i.import_id DESC LIMIT $1 OFFSET $2"
                ),
                &[&page.limit(), &page.offset()],
            )
            .await?;
        rows.iter().map(record_of).collect()
    }

    /// One import with what it changed, or its listed problems; an id that is not one
    /// is 404 like an unknown one.
    pub async fn detail(&self, id: &str) -> Result<ImportDetail, ApiError> {
        let not_found = || ApiError::new(ErrorCode::NotFound, format!("no import with id '{id}'"));
        let import_id: i64 = id.parse().map_err(|_| not_found())?;
        let client = self.pool.get().await?;
        let row = client
            .query_opt_named(
                "imports.find",
                &format!(
                    "SELECT {RECORD_COLUMNS}, i.row_errors::text AS row_errors \
                     FROM {RECORD_FROM} WHERE i.import_id = $1"
                ),
                &[&import_id],
            )
            .await?
            .ok_or_else(not_found)?;
        let record = record_of(&row)?;
        let accepted = record.result == "accepted";
        let row_errors = match row.try_get::<_, Option<String>>("row_errors")? {
            Some(text) => Some(serde_json::from_str(&text).map_err(ApiError::internal)?),
            None if accepted => Some(Vec::new()),
            None => None,
        };
        Ok(ImportDetail { record, row_errors })
    }
}

/// The uploaded file, not yet read.
struct File {
    kind: FileKind,
    bytes: Vec<u8>,
    limits: ImportLimits,
    /// Data rows read so far (header excluded), kept up to date by the reader.
    rows: Arc<AtomicUsize>,
}

/// The file as it is read and checked on a blocking thread: a piece every
/// [`PIECE_ROWS`] rows, in order, holding the valid quotes while the file so far is
/// faultless and nothing once it is not.
struct Pieces {
    receiver: mpsc::Receiver<Vec<QuoteRow>>,
    /// The read's end: the verdict (the number of quotes, or the problems), an
    /// unreadable file's error, or a panic.
    reader: JoinHandle<Result<Result<usize, Rejection>, ApiError>>,
}

impl Pieces {
    /// Starts reading and checking `file` against `reference`. The reader stays at most
    /// [`PIECES_AHEAD`] pieces ahead of the consumer (plus the one it is filling) and
    /// stops when the consumer goes away.
    fn read(file: File, reference: Arc<Reference>) -> Pieces {
        let (sender, receiver) = mpsc::channel(PIECES_AHEAD);
        let reader = tokio::task::spawn_blocking(move || {
            let File {
                kind,
                bytes,
                limits,
                rows,
            } = file;
            let mut validator = Validator::new(&reference);
            let mut quotes = Vec::with_capacity(PIECE_ROWS);
            let read = workbook::read_rows(kind, &bytes, &limits, &mut |row| {
                let quote = validator.row(&row);
                // Once the file is known to be refused, storing more would be wasted
                // work; the rest is still checked, so the answer counts every problem.
                if validator.is_clean() {
                    quotes.extend(quote);
                } else {
                    quotes.clear();
                }
                let read = validator.rows();
                rows.store(read, Ordering::Relaxed);
                if read == 0 || read % PIECE_ROWS != 0 {
                    return true;
                }
                // A piece every PIECE_ROWS rows: full while the file is clean, empty
                // once it is not, so the consumer still hears how far the read has got.
                let piece = std::mem::replace(&mut quotes, Vec::with_capacity(PIECE_ROWS));
                sender.blocking_send(piece).is_ok()
            });
            read?;
            if !quotes.is_empty() && validator.is_clean() {
                // A consumer that is gone no longer needs it.
                let _ = sender.blocking_send(quotes);
            }
            Ok(validator.finish())
        });
        Pieces { receiver, reader }
    }

    async fn next(&mut self) -> Option<Vec<QuoteRow>> {
        self.receiver.recv().await
    }

    /// After the last piece: the verdict, or why the file could not be read to its end.
    async fn finish(self) -> Result<Result<usize, Rejection>, ApiError> {
        drop(self.receiver);
        self.reader.await.map_err(ApiError::internal)?
    }
}

/// Reads the reference (the database's calendar and indexes), stores each valid piece of
/// the file as it is read and checked, then recalculates.
async fn store(
    tx: &Transaction<'_>,
    file: File,
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
    let composites = store::composites(tx).await?;
    let reference = Arc::new(Reference {
        quote_indexes,
        open_days,
        calculated_indexes: composites.iter().map(|c| c.code.clone()).collect(),
    });
    let rows = file.rows.clone();
    let mut pieces = Pieces::read(file, reference.clone());

    let vintage = history::next_vintage(tx).await?;
    let mut writer = QuoteWriter::new(vintage);
    let mut reported = 0;
    while let Some(piece) = pieces.next().await {
        if !piece.is_empty() {
            writer.write(tx, &piece).await?;
        }
        let read = rows.load(Ordering::Relaxed);
        if read >= reported + PROGRESS_ROWS {
            reported = read;
            progress(&format!("{read} rows read so far"));
        }
    }
    let verdict = pieces.finish().await?;
    let quotes = verdict.map_err(|r| ApiError::rejected(r.errors, r.total))?;
    progress(&format!(
        "{} rows read, {quotes} quotes valid and stored; recalculating",
        rows.load(Ordering::Relaxed)
    ));
    let recalculated = writer
        .recalculate(tx, &reference.open_days, &composites)
        .await?;
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
            .map(|(code, date)| (code.clone(), WireDate(*date).to_string()))
            .collect(),
        changes: recalculated.changes,
        published_at: None,
        vintage,
    })
}

struct Summary<'a> {
    errors: usize,
    message: String,
    /// A refused import's listed problems (stored as `row_errors`); `None` when accepted.
    row_errors: Option<&'a [RowError]>,
}

impl Summary<'_> {
    fn accepted(outcome: &ImportOutcome) -> Summary<'static> {
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
async fn record_changes(
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

#[allow(clippy::too_many_arguments)]
async fn record(
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
    let row = client
        .query_one_named(
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
        .await?;
    Ok(row.try_get(0)?)
}
