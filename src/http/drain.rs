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
//! stop is immediate, and actix-server tells its connections to finish before it stops
//! its accept thread: a connection accepted in those few milliseconds, or a request
//! sent on an idle keep-alive connection then, is closed unanswered (the client sees a
//! reset, not a refusal). Such a request was never started, so never counted; but a
//! client cannot know that, which is why every deployment behind a balancer sets the
//! delay (the Kubernetes manifests use 5 s). The fault test `faults::sigterm` checks
//! that every request the service started was answered and counted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{ServerHandle, ServiceRequest, ServiceResponse};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web;

use crate::routes::AppState;

/// Set once a stop signal has arrived; never unset.
#[derive(Clone, Default)]
pub struct Draining(Arc<AtomicBool>);

impl Draining {
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Middleware: `Connection: close` on every answer while draining.
pub async fn close_when_draining(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let draining = req
        .app_data::<web::Data<AppState>>()
        .is_some_and(|state| state.draining.is_set());
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

/// Waits for SIGTERM or SIGINT, drains for `delay`, then stops `server` gracefully. A
/// second signal during the drain (an impatient Ctrl-C) ends the drain at once, and
/// one during the graceful stop stops without waiting for requests in flight.
pub async fn stop_on_signal(
    mut signals: StopSignals,
    server: ServerHandle,
    draining: Draining,
    delay: Duration,
) {
    signals.next().await;
    draining.set();
    tracing::info!(
        delay_ms = delay.as_millis() as u64,
        "stop signal: draining (readyz 503, connections closed after each answer)"
    );
    tokio::select! {
        () = tokio::time::sleep(delay) => {}
        () = signals.next() => tracing::info!("second stop signal: draining cut short"),
    }
    tokio::select! {
        () = server.stop(true) => {}
        () = signals.next() => {
            tracing::warn!("another stop signal: stopping without waiting for requests in flight");
            server.stop(false).await;
        }
    }
}
