//! The public listener: actix-web's HTTP service on a TCP listener, with two guards
//! that sit below HTTP, where no middleware reaches.
//!
//! - **Connections per client address.** Each address may hold at most
//!   `MAX_CONNECTIONS_PER_IP` open connections (trusted proxies excepted: a balancer
//!   carries many clients). A connection past the cap is marked ([`OverCap`], in the
//!   connection's data); the request context answers its first request 429 / 42901 and
//!   closes it, so a client sees an ordinary answer to what it sent. With the body pace
//!   ([`super::body_pace`]) and the 5-second limit on request heads, this bounds what
//!   slow clients can hold.
//! - **Envelopes for the parser's refusals.** When actix's HTTP/1 parser refuses a
//!   request (conflicting `Content-Length` and `Transfer-Encoding`, a malformed head:
//!   400; too many or too large headers: 431; a head that never completes: 408), it
//!   writes a bodiless response itself and closes the connection; no handler or
//!   middleware runs. [`Guarded`] recognises those responses on their way out (a head
//!   with one of these statuses, `content-length: 0` and no `content-type`, which no
//!   response of the application has: every one of them is an envelope) and writes the
//!   same status with the JSON envelope and a `request_id` instead, logged at `warn`.
//!
//! This module must never read or alter anything else a connection carries.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, TcpListener};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_http::{Extensions, HttpService, Protocol, Request, Response};
use actix_server::Server;
use actix_service::{
    fn_service, map_config, IntoServiceFactory, ServiceFactory, ServiceFactoryExt,
};
use actix_web::body::MessageBody;
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;
use ipnet::IpNet;
use iq_actors::{ApiError, ErrorCode};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::RequestId;

/// How long a stopping server waits for the requests in flight before it closes their
/// connections (the Kubernetes grace period is sized from it and `startup::DRAIN_TIMEOUT`).
pub const IN_FLIGHT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an idle keep-alive connection stays open. A client that pools connections
/// should forget one sooner: a request it sends as the server closes it is lost.
pub const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// How the listener runs.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    /// `None`: one per core.
    pub workers: Option<usize>,
    /// 0: no cap.
    pub max_connections_per_ip: u32,
    pub trusted_proxies: Vec<IpNet>,
}

/// Serves `factory`'s application on `listener` until stopped (SIGINT/SIGTERM, or the
/// server's handle), as `HttpServer` would, with the guards of this module.
pub fn serve<F, I, S, B>(
    listener: TcpListener,
    options: ListenOptions,
    factory: F,
) -> io::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: std::fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as actix_service::Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let addr = listener.local_addr()?;
    // Stop signals are handled by `drain::stop_on_signal`, which drains first.
    let mut builder = Server::build()
        .backlog(1024)
        .shutdown_timeout(IN_FLIGHT_TIMEOUT.as_secs())
        .disable_signals();
    if let Some(workers) = options.workers {
        builder = builder.workers(workers);
    }
    let counts = Arc::new(ConnectionCounts::default());
    let builder = builder.listen(format!("iq-service-{addr}"), listener, move || {
        let options = options.clone();
        let counts = counts.clone();
        // No graceful-shutdown signal to the connections: it closes an idle keep-alive
        // connection at once, while its client may be sending a request on it. A stop
        // closes each connection after its next answer instead (`Connection: close`,
        // `drain::stop_on_signal`), and an idle one at its keep-alive timeout.
        let http = HttpService::build()
            .keep_alive(KEEP_ALIVE)
            .client_request_timeout(Duration::from_secs(5))
            .client_disconnect_timeout(Duration::from_secs(1))
            .local_addr(addr)
            .on_connect_ext(|io: &Guarded<TcpStream>, data: &mut Extensions| {
                if let Some(cap) = io.over_cap {
                    data.insert(OverCap(cap));
                }
            })
            .finish(map_config(
                factory()
                    .into_factory()
                    .map_err(|err| err.into().error_response()),
                |_| AppConfig::default(),
            ));
        fn_service(move |io: TcpStream| {
            let options = options.clone();
            let counts = counts.clone();
            async move {
                let _ = io.set_nodelay(true);
                let peer = io.peer_addr().ok();
                let slot = match peer.map(|p| p.ip().to_canonical()) {
                    Some(ip) if !options.trusted_proxies.iter().any(|n| n.contains(&ip)) => {
                        Some(counts.take(ip))
                    }
                    _ => None,
                };
                let cap = options.max_connections_per_ip;
                let over_cap = slot
                    .as_ref()
                    .is_some_and(|slot| cap > 0 && slot.held > cap)
                    .then_some(cap);
                Ok::<_, actix_http::error::DispatchError>((
                    Guarded::new(io, slot, over_cap),
                    Protocol::Http1,
                    peer,
                ))
            }
        })
        .and_then(http)
    })?;
    Ok(builder.run())
}

/// In a connection's data: it is past its address's cap of open connections; its
/// first request is answered 429 / 42901 and the connection closed.
#[derive(Debug, Clone, Copy)]
pub struct OverCap(pub u32);

impl OverCap {
    pub fn refusal(self) -> ApiError {
        ApiError::new(
            ErrorCode::RateLimited,
            format!(
                "more than {} open connections from one address: reuse your connections",
                self.0
            ),
        )
    }
}

/// A whole HTTP/1.1 response with the envelope, closing the connection.
fn raw_response(status: u16, reason: &str, request_id: &RequestId, error: &ApiError) -> Vec<u8> {
    let body = serde_json::json!({
        "request_id": request_id.as_str(),
        "code": error.code.as_u32(),
        "message": error.message,
        "data": null,
    })
    .to_string();
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\nx-content-type-options: nosniff\r\nx-request-id: {request_id}\r\n",
        body.len()
    );
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// Open connections per client address.
#[derive(Default)]
struct ConnectionCounts(Mutex<HashMap<IpAddr, u32>>);

/// One open connection of `ip`; dropping it (the connection ended) gives it back.
pub struct Slot {
    counts: Arc<ConnectionCounts>,
    ip: IpAddr,
    /// Connections `ip` held with this one.
    held: u32,
}

impl ConnectionCounts {
    fn take(self: &Arc<Self>, ip: IpAddr) -> Slot {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let held = counts.entry(ip).or_insert(0);
        *held = held.saturating_add(1);
        Slot {
            counts: self.clone(),
            ip,
            held: *held,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(held) = counts.get_mut(&self.ip) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}

/// A connection whose parser refusals go out as envelopes, holding its address's slot.
pub struct Guarded<T> {
    io: T,
    /// The cap this connection is past, if it is.
    over_cap: Option<u32>,
    /// Bytes owed to the peer before anything else: a rewritten refusal.
    pending: Vec<u8>,
    written: usize,
    _slot: Option<Slot>,
}

impl<T> Guarded<T> {
    fn new(io: T, slot: Option<Slot>, over_cap: Option<u32>) -> Self {
        Guarded {
            io,
            over_cap,
            pending: Vec::new(),
            written: 0,
            _slot: slot,
        }
    }
}

impl<T: AsyncWrite + Unpin> Guarded<T> {
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.pending[self.written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => self.written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        std::task::ready!(this.drain(cx))?;
        match rewrite_refusal(buf) {
            None => Pin::new(&mut this.io).poll_write(cx, buf),
            Some(rewritten) => {
                this.pending = rewritten;
                // The caller's bytes are taken; what is owed goes out now or on flush.
                match this.drain(cx) {
                    Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                    _ => Poll::Ready(Ok(buf.len())),
                }
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        std::task::ready!(this.drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        std::task::ready!(this.drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// The statuses actix's parser answers by itself, with what to tell the client.
const REFUSALS: [(&[u8], u16, &str, &str); 3] = [
    (
        b"HTTP/1.1 400 ",
        400,
        "Bad Request",
        "the request is not valid HTTP/1.1 (for example both Content-Length and \
         Transfer-Encoding, or a malformed header line)",
    ),
    (
        b"HTTP/1.1 431 ",
        431,
        "Request Header Fields Too Large",
        "the request has too many headers or too large a head",
    ),
    (
        b"HTTP/1.1 408 ",
        408,
        "Request Timeout",
        "the request head did not arrive within 5 seconds",
    ),
];

/// `buf` with a parser refusal's bodiless head replaced by an enveloped response, or
/// `None` when `buf` is not one (every response of the application has a body and a
/// `content-type`, so it never matches).
///
/// This runs on every write of every connection, so it looks only at the start of the
/// buffer: the parser writes its refusal once the connection's earlier answers have
/// gone out, as the first bytes of a write. Anything else costs one prefix comparison.
fn rewrite_refusal(buf: &[u8]) -> Option<Vec<u8>> {
    if !buf.starts_with(b"HTTP/1.1 4") {
        return None;
    }
    for (prefix, status, reason, message) in REFUSALS {
        if !buf.starts_with(prefix) {
            continue;
        }
        let end = find(buf, b"\r\n\r\n")? + 4;
        let head = buf[..end].to_ascii_lowercase();
        if find(&head, b"\r\ncontent-length: 0\r\n").is_none()
            || find(&head, b"content-type").is_some()
        {
            continue;
        }
        let request_id = RequestId::generate();
        tracing::warn!(%request_id, status, "request refused by the HTTP parser");
        let error = ApiError::invalid(message);
        let mut out = raw_response(status, reason, &request_id, &error);
        out.extend_from_slice(&buf[end..]);
        return Some(out);
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bodiless_parser_refusal_becomes_an_envelope() {
        let refusal = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\
                        date: Mon, 23 Nov 2026 14:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(rewrite_refusal(refusal).unwrap()).unwrap();
        assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
        assert!(out.contains("content-type: application/json"), "{out}");
        let body = out.split("\r\n\r\n").nth(1).unwrap();
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["code"], 40001);
        assert!(json["request_id"].as_str().unwrap().starts_with("req_"));
        assert!(out.contains(&format!("content-length: {}\r\n", body.len())));
    }

    #[test]
    fn application_responses_pass_untouched() {
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 60\r\ncontent-type: application/json\r\n\r\n{}";
        assert!(rewrite_refusal(ours).is_none());
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(rewrite_refusal(ok).is_none());
        // Only the start of a write is looked at: a body never starts with a head.
        assert!(rewrite_refusal(b"{\"message\":\"HTTP/1.1 400 \\r\\n\"}").is_none());
    }

    #[test]
    fn slots_are_counted_per_address_and_given_back() {
        let counts = Arc::new(ConnectionCounts::default());
        let ip: IpAddr = "203.0.113.9".parse().unwrap();
        let first = counts.take(ip);
        let second = counts.take(ip);
        assert_eq!((first.held, second.held), (1, 2));
        drop(first);
        drop(second);
        assert_eq!(counts.take(ip).held, 1);
        assert!(counts.0.lock().unwrap().len() <= 1);
    }
}
