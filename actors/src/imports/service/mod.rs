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
//!
//! This file is the import's flow; its parts are, one job each:
//!
//! - `pieces`: the file read and checked on a blocking thread, handed over in pieces.
//! - `recording`: the `imports` row of every attempt and an accepted one's changes.
//! - `records`: the back office's read side (list, page, detail).
//! - `restatement`: every index recalculated when the method changes (D26).
//!
//! The flow must never write market data outside the one transaction it runs in
//! ([`ChangeBus::write`]); every attempt, refused or not, is recorded before the
//! caller hears its answer (a failure to record a refusal is logged).

mod pieces;
mod recording;
mod records;
mod restatement;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool_postgres::Pool;
use serde::Serialize;
use tokio_postgres::Transaction;
use tracing::Instrument;

use super::bounds::ImportLimits;
use super::validate::ImportReference;
use super::workbook::{self, FileKind};
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::calendar::service_today;
use crate::caller::Account;
use crate::changes::{Change, ChangeBus};
use crate::clock::Clock;
use crate::db::Traced;
use crate::events;
use crate::metrics::{metrics, ImportLabels};
use crate::quotes::history;
use crate::quotes::store::{self, IndexChanges, QuoteWriter};
use crate::safe_text::text_problem;
use crate::wire_date::WireDate;
use crate::{ApiError, ErrorCode};

use pieces::{File, Pieces};
use recording::{record, record_changes, Summary};

pub use pieces::PIECE_ROWS;
pub use records::{ImportDetail, ImportRecord, DEFAULT_LISTED, MAX_LISTED};
pub use restatement::Restated;

/// Any key unique to imports; held for the import's transaction.
const IMPORT_LOCK: i64 = 0x1A5E_0002;
/// A large workbook's recalculation may take longer than a query may.
const IMPORT_STATEMENT_TIMEOUT: &str = "SET LOCAL statement_timeout = '300s'";
/// A progress message every so many rows, for the `import` command on large files.
const PROGRESS_ROWS: usize = 50_000;
/// The most characters an import's note may hold (D26).
pub const MAX_NOTE_CHARS: usize = 500;

/// An import's note (D26) as it may be stored: none when absent or empty, else at most
/// [`MAX_NOTE_CHARS`] characters of safe text ([`text_problem`]), or a refusal naming
/// `note`.
pub fn checked_note(note: Option<&str>) -> Result<Option<&str>, ApiError> {
    let Some(note) = note.filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let chars = note.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(ApiError::invalid(format!(
            "field 'note' holds {chars} characters; at most {MAX_NOTE_CHARS} are allowed"
        )));
    }
    if let Some(problem) = text_problem(note) {
        return Err(ApiError::invalid(format!("field 'note' {problem}")));
    }
    Ok(Some(note))
}

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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportOutcome {
    pub import_id: String,
    pub file_name: String,
    /// Quote rows stored.
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub quotes: usize,
    /// `index_daily` rows written by the recalculation.
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub daily_rows: usize,
    /// The earliest recalculated date of each index (`YYYYMMDD`).
    pub recalculated_from: BTreeMap<String, String>,
    /// What changed for each recalculated index (the composite included), by code.
    pub changes: Vec<IndexChanges>,
    /// When its data was published: `as_of` this instant or later sees it (D17).
    // `None` only inside the import, before it publishes: never in an answer.
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = DateTime<Utc>, required = true)
    )]
    pub published_at: Option<DateTime<Utc>>,
    /// The vintage it publishes.
    #[serde(skip)]
    pub vintage: i64,
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
    /// Where days begin and end, for the events' windows (D5, D22).
    pub service_tz: chrono_tz::Tz,
}

impl Importer {
    /// Imports `bytes` as the file `file_name`, for the reason `note` gives (D26: kept
    /// with its vintage, the reason of every revision it makes); `progress` hears each
    /// stage. The whole import is one `import` span (its statements are children) and
    /// one sample of `iq_import_duration_seconds`.
    pub async fn import(
        &self,
        by: &Author,
        source: Source,
        file_name: &str,
        (bytes, note): (Vec<u8>, Option<&str>),
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
            .attempt(by, source, file_name, (bytes, note), progress)
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
        by: &Author,
        source: Source,
        file_name: &str,
        (bytes, note): (Vec<u8>, Option<&str>),
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<ImportOutcome, ApiError> {
        let started = self.clock.now();
        // A bad note, or a file that is plainly not what its name says, is refused
        // before it takes a connection and the import lock.
        let checked = checked_note(note).and_then(|note| {
            FileKind::of_name(file_name)
                .map(|kind| (kind, note))
                .ok_or_else(|| {
                    ApiError::invalid(format!(
                        "'{file_name}' is neither a .xlsx workbook nor a .csv file"
                    ))
                })
        });
        let kind =
            checked.and_then(|(kind, note)| workbook::sniff(kind, &bytes).map(|()| (kind, note)));
        let (kind, note) = match kind {
            Ok(checked) => checked,
            Err(error) => {
                self.record_failure(by.account.as_ref(), source, file_name, 0, started, &error)
                    .await;
                return Err(error);
            }
        };
        progress(&format!("reading {file_name} ({} bytes)", bytes.len()));
        let today = service_today(started, self.service_tz);
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
                let outcome = store(tx, file, file_name, today, progress).await?;
                let id = record(
                    tx,
                    by.account.as_ref(),
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
                let published_at = history::publish(tx, outcome.vintage, Some(id), note).await?;
                // What each tier hears of it, committed with it (D22).
                let now = self.clock.now();
                let today = service_today(now, self.service_tz);
                events::record(tx, Some(outcome.vintage), today, now).await?;
                let outcome = ImportOutcome {
                    import_id: id.to_string(),
                    published_at: Some(published_at),
                    ..outcome
                };
                let entry = Entry::new(Action::ImportAccepted, Target::new(Kind::Import, id));
                by.record(tx, entry.after(&outcome)).await?;
                Ok(outcome)
            })
            .await;
        if let Err(error) = &written {
            let rows = rows.load(Ordering::Relaxed);
            self.record_failure(by.account.as_ref(), source, file_name, rows, started, error)
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
}

/// The open days, read after locking the calendar for the rest of `tx`. A calendar
/// change waits for the writer (and the writer for it): no quote can land on a day
/// closed between this read and the commit. Calendar, then data, is the lock order of
/// both.
async fn locked_calendar(tx: &Transaction<'_>) -> Result<BTreeSet<NaiveDate>, ApiError> {
    tx.batch_execute_named(
        "imports.lock_calendar",
        "LOCK TABLE trade_calendar IN SHARE MODE",
    )
    .await?;
    Ok(tx
        .query_column_named(
            "imports.read_calendar",
            "SELECT trade_date FROM trade_calendar",
            &[],
        )
        .await?)
}

/// Bounds the transaction's statements and takes the lock one import at a time holds
/// until it ends: another running import is 409 / 40901.
async fn take_the_import_lock(tx: &Transaction<'_>) -> Result<(), ApiError> {
    tx.batch_execute_named("imports.set_timeout", IMPORT_STATEMENT_TIMEOUT)
        .await?;
    let locked: bool = tx
        .query_value_named(
            "imports.try_lock",
            "SELECT pg_try_advisory_xact_lock($1)",
            &[&IMPORT_LOCK],
        )
        .await?;
    if !locked {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "another import is running; try again when it has finished",
        ));
    }
    Ok(())
}

/// Reads the reference (the database's calendar and indexes, and `today`, the service's
/// date), stores each valid piece of the file as it is read and checked, then
/// recalculates.
async fn store(
    tx: &Transaction<'_>,
    file: File,
    file_name: &str,
    today: NaiveDate,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<ImportOutcome, ApiError> {
    take_the_import_lock(tx).await?;
    let quote_indexes: BTreeSet<String> = tx
        .query_column_named(
            "imports.read_indexes",
            "SELECT index_code FROM indexes WHERE has_quotes",
            &[],
        )
        .await?;
    let open_days = locked_calendar(tx).await?;
    let composites = store::composites(tx).await?;
    let reference = Arc::new(ImportReference {
        quote_indexes,
        open_days,
        calculated_indexes: composites.iter().map(|c| c.code.clone()).collect(),
        today,
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
