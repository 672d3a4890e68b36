//! The uploaded file read and checked on a blocking thread, and handed to the import's
//! writer in pieces of [`PIECE_ROWS`] valid quotes while the file so far is faultless.
//!
//! Parsing a workbook is CPU work that would stall the async runtime, so it runs under
//! `spawn_blocking`; a bounded channel keeps a fast reader at most [`PIECES_AHEAD`]
//! pieces ahead of the writer. This must never touch the database: the verdict and
//! the quotes go back to the flow in `service`, which owns the transaction.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::imports::bounds::ImportLimits;
use crate::imports::validate::{ImportReference, Rejection, Validator};
use crate::imports::workbook::{self, FileKind};
use crate::quotes::recalc::QuoteRow;
use crate::ApiError;

/// Rows per piece handed from the reader to the writer: large enough that a `COPY` per
/// piece costs little, small enough that parsing and writing overlap.
pub const PIECE_ROWS: usize = 8192;
/// Pieces read ahead of the writer; bounds the memory of a fast reader.
const PIECES_AHEAD: usize = 8;

/// The uploaded file, not yet read.
pub(super) struct File {
    pub(super) kind: FileKind,
    pub(super) bytes: Vec<u8>,
    pub(super) limits: ImportLimits,
    /// Data rows read so far (header excluded), kept up to date by the reader.
    pub(super) rows: Arc<AtomicUsize>,
}

/// The file as it is read and checked on a blocking thread: a piece every
/// [`PIECE_ROWS`] rows, in order, holding the valid quotes while the file so far is
/// faultless and nothing once it is not.
pub(super) struct Pieces {
    receiver: mpsc::Receiver<Vec<QuoteRow>>,
    /// The read's end: the verdict (the number of quotes, or the problems), an
    /// unreadable file's error, or a panic.
    reader: JoinHandle<Result<Result<usize, Rejection>, ApiError>>,
}

impl Pieces {
    /// Starts reading and checking `file` against `reference`. The reader stays at most
    /// [`PIECES_AHEAD`] pieces ahead of the consumer (plus the one it is filling) and
    /// stops when the consumer goes away.
    pub(super) fn read(file: File, reference: Arc<ImportReference>) -> Pieces {
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

    pub(super) async fn next(&mut self) -> Option<Vec<QuoteRow>> {
        self.receiver.recv().await
    }

    /// After the last piece: the verdict, or why the file could not be read to its end.
    pub(super) async fn finish(self) -> Result<Result<usize, Rejection>, ApiError> {
        drop(self.receiver);
        self.reader.await.map_err(ApiError::internal)?
    }
}
