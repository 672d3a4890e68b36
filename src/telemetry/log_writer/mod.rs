//! The log writer: every thread's log lines collect in one buffer, and a thread of its
//! own writes the buffer out, many lines a write, a few milliseconds after the first
//! of them arrived.
//!
//! Why not `tracing-appender`'s non-blocking writer, which did this job before: it
//! queues each line on a channel whose receiving thread sleeps whenever the queue is
//! empty, so below saturation every line woke that thread (a futex call on the
//! request's thread, a context switch, and a `write` of one line). At half the maximum
//! rate that was about a tenth of the service's CPU and the largest source of context
//! switches. Here only the first line after a write wakes the writer, which then
//! lingers ([`LINGER`]) to collect the lines that follow, so a busy service makes a
//! hundred writes a second at most below [`WAKE_AT`] and a quiet one still writes each
//! line within the linger.
//!
//! It must never drop a line or split one: a line is appended whole under the lock, and
//! when [`MAX_PENDING`] bytes wait unwritten (the output is stuck) a logging thread
//! waits for the writer rather than losing lines an SRE may need. What is still
//! pending when the [`LogGuard`] drops is written before the drop returns; what a kill
//! takes with it is at most the last linger's lines.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long the writer collects lines after the first one before writing them all.
pub const LINGER: Duration = Duration::from_millis(10);

/// Pending bytes at which the writer stops lingering and writes at once.
pub const WAKE_AT: usize = 64 * 1024;

/// Pending bytes past which logging threads wait for the writer.
pub const MAX_PENDING: usize = 8 * 1024 * 1024;

/// Where log lines go: cheap to clone, one per layer. Each `write` call must be whole
/// lines (every layer of this service writes a line in one call).
#[derive(Clone)]
pub struct LogWriter {
    shared: Arc<Shared>,
}

/// Stops the writer's thread when dropped, after it has written every pending line.
pub struct LogGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    pending: Mutex<Pending>,
    /// The writer waits here for a first line, or for [`WAKE_AT`] bytes while it lingers.
    wake_writer: Condvar,
    /// Logging threads over [`MAX_PENDING`] wait here for the writer to take the lines.
    taken: Condvar,
    wake_at: usize,
    max_pending: usize,
}

struct Pending {
    lines: Vec<u8>,
    writer: Writer,
    closed: bool,
}

/// What the writer's thread is doing, so a logging thread knows whether to wake it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Writing, or about to look at the buffer again: nobody need wake it.
    Busy,
    /// Asleep with no timeout: the next line must wake it.
    Idle,
    /// Waiting out its linger: only [`WAKE_AT`] bytes need wake it early.
    Lingering,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A panic while holding the lock leaves whole lines behind it (appending is
        // one `extend_from_slice`): the buffer is still good to write.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts the writer's thread, named `thread_name`, writing to `output`.
pub fn start<W: Write + Send + 'static>(output: W, thread_name: &str) -> (LogWriter, LogGuard) {
    start_with(output, thread_name, LINGER, WAKE_AT, MAX_PENDING)
}

fn start_with<W: Write + Send + 'static>(
    mut output: W,
    thread_name: &str,
    linger: Duration,
    wake_at: usize,
    max_pending: usize,
) -> (LogWriter, LogGuard) {
    let shared = Arc::new(Shared {
        pending: Mutex::new(Pending {
            lines: Vec::with_capacity(wake_at),
            writer: Writer::Busy,
            closed: false,
        }),
        wake_writer: Condvar::new(),
        taken: Condvar::new(),
        wake_at,
        max_pending,
    });
    let writer = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name(thread_name.to_string())
        .spawn(move || write_until_closed(&writer, &mut output, linger))
        // At start-up, before anything could be logged: a service that cannot start
        // a thread cannot serve either.
        .expect("the log writer's thread starts");
    (
        LogWriter {
            shared: Arc::clone(&shared),
        },
        LogGuard {
            shared,
            thread: Some(thread),
        },
    )
}

/// The writer's loop: wait for a first line, linger, take every pending line, write
/// them in one go; until closed and empty.
fn write_until_closed(shared: &Shared, output: &mut impl Write, linger: Duration) {
    let mut taken = Vec::with_capacity(shared.wake_at);
    loop {
        let mut pending = shared.lock();
        while pending.lines.is_empty() && !pending.closed {
            pending.writer = Writer::Idle;
            pending = shared
                .wake_writer
                .wait(pending)
                .unwrap_or_else(PoisonError::into_inner);
        }
        pending.writer = Writer::Busy;
        if pending.lines.len() < shared.wake_at && !pending.closed {
            pending.writer = Writer::Lingering;
            pending = shared
                .wake_writer
                .wait_timeout_while(pending, linger, |p| {
                    p.lines.len() < shared.wake_at && !p.closed
                })
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            pending.writer = Writer::Busy;
        }
        if pending.lines.is_empty() && pending.closed {
            return;
        }
        std::mem::swap(&mut pending.lines, &mut taken);
        drop(pending);
        shared.taken.notify_all();
        // Nowhere to report a failed write but the output itself: the lines are lost
        // either way, and the service goes on.
        let _ = output.write_all(&taken).and_then(|()| output.flush());
        taken.clear();
        if taken.capacity() > shared.max_pending {
            taken.shrink_to(shared.wake_at);
        }
    }
}

impl LogWriter {
    fn append(&self, line: &[u8]) {
        let shared = &*self.shared;
        let mut pending = shared.lock();
        if pending.closed {
            // After shutdown (the process is exiting), as `tracing-appender` did.
            return;
        }
        while pending.lines.len() >= shared.max_pending && !pending.closed {
            pending = shared
                .taken
                .wait(pending)
                .unwrap_or_else(PoisonError::into_inner);
        }
        pending.lines.extend_from_slice(line);
        // Only a sleeping writer, or a lingering one with enough to write, is woken:
        // a notification is a system call, which is what this writer exists to avoid.
        let wake = match pending.writer {
            Writer::Busy => false,
            Writer::Idle => true,
            Writer::Lingering => pending.lines.len() >= shared.wake_at,
        };
        if wake {
            pending.writer = Writer::Busy;
        }
        drop(pending);
        if wake {
            shared.wake_writer.notify_one();
        }
    }
}

impl Write for &LogWriter {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        self.append(line);
        Ok(line.len())
    }

    /// Lines are written by the writer's thread; dropping the [`LogGuard`] writes what
    /// is pending.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = &'a LogWriter;

    fn make_writer(&'a self) -> &'a LogWriter {
        self
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake_writer.notify_one();
        self.shared.taken.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests;
