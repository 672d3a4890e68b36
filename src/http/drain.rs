//! Leaving a load balancer's rotation before stopping, so a rolling restart fails no
//! request.
//!
//! On SIGTERM or SIGINT the instance first *drains* for `SHUTDOWN_DELAY_MS`: it keeps
//! serving, answers `/readyz` with 503 (the balancer's health check takes it out), and
//! sends `Connection: close` on every answer, so no keep-alive connection stays open
//! for the balancer to send a request on at the moment the server closes it (the one
//! failure a balancer cannot retry safely: a query counts against the quota once sent).
//! Idle connections the balancer keeps are closed by the balancer's own keep-alive
//! timeout, which must be shorter than the delay. Only then does the server stop
//! accepting (new connections are refused, which a balancer retries elsewhere) and
//! finish what is in flight. It never cuts a request it has started.
//!
//! Without the delay (`SHUTDOWN_DELAY_MS=0`, the default, for a single instance) the
//! stop begins at once, and answers every request a client sent on a connection the
//! service accepted ([`stop_on_signal`] says how): a client that connects after the
//! signal is refused, never reset. The fault tests `faults::sigterm` (every request the
//! service started answered and counted) and `faults::direct_client` (no request on an
//! accepted connection lost, across repeated SIGTERMs) hold it to that. With a delay,
//! answers say `Connection: close` while the listener still accepts (the balancer needs
//! that), so a client without a balancer reconnects throughout the delay, and one whose
//! connection the kernel completed in the microseconds before the listener closed is
//! reset: the delay is for deployments behind a balancer (the Kubernetes manifests use
//! 5 s).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{ServerHandle, ServiceRequest, ServiceResponse};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web;

/// Set once a stop signal has arrived; never unset.
#[derive(Clone, Default)]
pub struct Draining(Arc<(AtomicBool, tokio::sync::Notify)>);

impl Draining {
    pub fn is_set(&self) -> bool {
        self.0 .0.load(Ordering::Relaxed)
    }

    /// Returns once the flag is set: what ends a long poll, so a draining instance
    /// holds no request longer than it must.
    pub async fn wait(&self) {
        loop {
            let notified = self.0 .1.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }

    fn set(&self) {
        self.0 .0.store(true, Ordering::Relaxed);
        self.0 .1.notify_waiters();
    }
}

/// Middleware: `Connection: close` on every answer while draining.
pub async fn close_when_draining(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    // Its own app data (the state holds it too): the edge never reads the state.
    let draining = req
        .app_data::<web::Data<Draining>>()
        .is_some_and(|draining| draining.is_set());
    let mut res = next.call(req).await?;
    if draining {
        res.response_mut()
            .head_mut()
            .set_connection_type(ConnectionType::Close);
    }
    Ok(res)
}

/// SIGTERM and SIGINT, listened for from the moment this is made. Made before the
/// server accepts its first connection: a signal that came before anything listened
/// would take its default action, killing the process without draining, without
/// writing the quota's usage and with the log writer's queue lost.
pub struct StopSignals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    /// Needs a Tokio runtime (the service's `main` has one).
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let streams = match (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) {
                (Ok(term), Ok(int)) => Some((term, int)),
                _ => {
                    tracing::error!("cannot listen for stop signals; stopping on Ctrl-C only");
                    None
                }
            };
            StopSignals { streams }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// The next stop signal.
    async fn next(&mut self) {
        #[cfg(unix)]
        if let Some((term, int)) = &mut self.streams {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The public listener's socket, shared with the server, so a stop can refuse new
/// connections at once, before any answer tells a client to reconnect.
pub struct Listening(std::net::TcpListener);

impl Listening {
    /// A second handle on `listener`'s socket (the server keeps the first).
    pub fn of(listener: &std::net::TcpListener) -> std::io::Result<Listening> {
        listener.try_clone().map(Listening)
    }

    /// Refuses new connections from now on: `shutdown(SHUT_RD)` takes a listening socket
    /// out of the listening state, so the kernel refuses the next connection (a client
    /// knows it was never accepted) instead of completing it into a queue nobody reads.
    /// The server's accept loop must be paused first: an `accept` on the socket now
    /// fails.
    fn refuse_new(&self) {
        use std::os::fd::AsRawFd;
        let socket = self.0.as_raw_fd();
        if let Err(error) = nix::sys::socket::shutdown(socket, nix::sys::socket::Shutdown::Read) {
            tracing::warn!(%error, "could not close the listener to new connections");
        }
    }
}

/// How long the accept thread takes to see the pause, and connections it accepted just
/// before to reach their worker: a worker that stops drops connections still queued
/// for it, unanswered.
const ACCEPTED_SETTLE: Duration = Duration::from_millis(50);

/// Waits for SIGTERM or SIGINT, drains for `delay`, then stops `server` gracefully. A
/// second signal during the drain (an impatient Ctrl-C) ends the drain at once, and
/// one during the graceful stop stops without waiting for requests in flight.
///
/// The stop answers every request on a connection the server accepted, in this order:
/// the accept loop pauses; the connections accepted before reach their workers; the
/// socket refuses new connections (a client that connects now is refused, never
/// reset); only then does every answer say `Connection: close`, so a client reconnects
/// only once nothing can accept it; and the server stops gracefully, each connection
/// closing after its answer in flight, an idle one only between requests (at its
/// keep-alive timeout, or when its client sends its next request, which is answered).
/// Answers said `Connection: close` earlier only during a `delay`, for a balancer.
pub async fn stop_on_signal(
    mut signals: StopSignals,
    server: ServerHandle,
    listening: Listening,
    draining: Draining,
    delay: Duration,
) {
    signals.next().await;
    if !delay.is_zero() {
        draining.set();
        tracing::info!(
            delay_ms = delay.as_millis() as u64,
            "stop signal: draining (readyz 503, connections closed after each answer)"
        );
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = signals.next() => tracing::info!("second stop signal: draining cut short"),
        }
    }
    server.pause().await;
    // The pause reaches the accept thread a moment after `pause` returns; until it
    // does, the thread may still accept, and would log an error for an accept on a
    // socket that refuses. In the meantime no answer has said `Connection: close`
    // (without a delay), so clients on keep-alive connections make no new ones.
    tokio::time::sleep(ACCEPTED_SETTLE).await;
    listening.refuse_new();
    draining.set();
    tracing::info!("stop signal: no new connections; answering those open, then stopping");
    tokio::select! {
        () = server.stop(true) => {}
        () = signals.next() => {
            tracing::warn!("another stop signal: stopping without waiting for requests in flight");
            server.stop(false).await;
        }
    }
}
