//! A request body must keep arriving: after a grace period it must have averaged at
//! least a minimum rate, or reading it fails. Without this a client that sends its
//! headers and then one byte every few seconds holds a connection and a handler for as
//! long as it likes (actix cuts slow *headers*, never slow bodies), and a few thousand
//! such clients hold the service.
//!
//! [`Paced`] wraps the body stream that a handler reads (JSON bodies and uploads alike),
//! so the rule is the same everywhere. It only measures time and bytes: it never
//! buffers, and it must never end a body that keeps its pace.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

/// The pace every body must keep (`BODY_GRACE_SECS`, `BODY_MIN_BYTES_PER_SEC`).
#[derive(Debug, Clone, Copy)]
pub struct BodyPace {
    /// Time any body may take, whatever its size.
    pub grace: Duration,
    /// Beyond the grace, each second must have brought this many bytes on average.
    pub min_bytes_per_sec: u64,
}

impl Default for BodyPace {
    fn default() -> Self {
        BodyPace {
            grace: Duration::from_secs(10),
            min_bytes_per_sec: 1024,
        }
    }
}

/// The message of the error a too-slow body ends with; handlers show it as a 40001.
pub const TOO_SLOW: &str = "the request body arrived too slowly";

impl BodyPace {
    /// The time a body of `received` bytes may have taken.
    fn allowed(&self, received: u64) -> Duration {
        let per_byte = match self.min_bytes_per_sec {
            0 => return Duration::MAX,
            rate => received.saturating_mul(1_000_000) / rate,
        };
        self.grace.saturating_add(Duration::from_micros(per_byte))
    }

    pub fn wrap<S>(self, inner: S) -> Paced<S> {
        let started = Instant::now();
        Paced {
            inner,
            pace: self,
            started,
            received: 0,
            deadline: Box::pin(tokio::time::sleep_until(started + self.allowed(0))),
        }
    }
}

/// A body stream held to a [`BodyPace`].
pub struct Paced<S> {
    inner: S,
    pace: BodyPace,
    started: Instant,
    received: u64,
    deadline: Pin<Box<Sleep>>,
}

impl<S> Stream for Paced<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.received = this.received.saturating_add(chunk.len() as u64);
                let deadline = this
                    .started
                    .checked_add(this.pace.allowed(this.received))
                    .unwrap_or_else(far_future);
                this.deadline.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(PayloadError::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    TOO_SLOW,
                ))))),
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn pace() -> BodyPace {
        BodyPace {
            grace: Duration::from_secs(2),
            min_bytes_per_sec: 100,
        }
    }

    #[test]
    fn the_allowance_grows_with_the_bytes() {
        assert_eq!(pace().allowed(0), Duration::from_secs(2));
        assert_eq!(pace().allowed(300), Duration::from_secs(5));
        let off = BodyPace {
            min_bytes_per_sec: 0,
            ..pace()
        };
        assert_eq!(off.allowed(0), Duration::MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_fails_after_the_grace() {
        let stalled = futures_util::stream::pending::<Result<Bytes, PayloadError>>();
        let mut body = pace().wrap(stalled);
        let started = Instant::now();
        let error = body.next().await.unwrap().unwrap_err();
        assert!(error.to_string().contains(TOO_SLOW), "{error}");
        assert_eq!(started.elapsed(), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_keeps_its_pace_is_read_whole() {
        // 100 bytes a second, exactly the minimum, for 10 seconds.
        let chunks = futures_util::stream::iter(0..10).then(|_| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, PayloadError>(Bytes::from(vec![b'x'; 100]))
        });
        let body = pace().wrap(Box::pin(chunks));
        let read: Vec<_> = body.collect().await;
        assert_eq!(read.len(), 10);
        assert!(read.iter().all(Result::is_ok));
    }
}
