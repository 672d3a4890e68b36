//! [`HttpTransport`]: sends a signed webhook message with reqwest.
//!
//! The address check happens where the connection is made: the client's resolver keeps
//! only public addresses of a name (so a name that resolves to a private address, now
//! or after a DNS change, reaches nothing), and a URL whose host is an address is
//! checked before sending. Proxies from the environment are not used: a proxy would
//! connect on our behalf to whatever the name resolves to there.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use iq_actors::webhooks::destination::{check_url, is_public};
use iq_actors::webhooks::{Answered, Transport, SEND_TIMEOUT};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The part of an answer kept for the delivery log.
const KEEP_BYTES: usize = 1024;

pub struct HttpTransport {
    client: reqwest::Client,
    allow_private: bool,
}

impl HttpTransport {
    pub fn new(allow_private: bool) -> Result<Self, String> {
        crate::tls::install_crypto();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(SEND_TIMEOUT)
            .no_proxy()
            .user_agent(concat!("iq-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(PublicOnly { allow_private })
            .build()
            .map_err(|e| format!("cannot build the webhook client: {e}"))?;
        Ok(HttpTransport {
            client,
            allow_private,
        })
    }
}

impl Transport for HttpTransport {
    fn post(
        &self,
        url: String,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    ) -> Pin<Box<dyn Future<Output = Answered> + Send>> {
        let client = self.client.clone();
        let allow_private = self.allow_private;
        Box::pin(async move {
            // Again at each attempt: the rules in force now decide, not those at
            // registration.
            if let Err(refused) = check_url(&url, allow_private) {
                return failed(refused.message);
            }
            let mut request = client.post(&url).body(body);
            for (name, value) in headers {
                request = request.header(name, value);
            }
            match request.send().await {
                Ok(mut answer) => {
                    let status = answer.status().as_u16();
                    let mut kept = Vec::new();
                    while kept.len() < KEEP_BYTES {
                        match answer.chunk().await {
                            Ok(Some(chunk)) => kept.extend_from_slice(&chunk),
                            _ => break,
                        }
                    }
                    kept.truncate(KEEP_BYTES);
                    Answered {
                        status: Some(status),
                        error: None,
                        body: Some(printable(&kept)),
                    }
                }
                Err(error) => failed(describe(&error)),
            }
        })
    }
}

fn failed(error: String) -> Answered {
    Answered {
        status: None,
        error: Some(error),
        body: None,
    }
}

/// What went wrong, for the member's delivery log, in a few fixed words (D27): "no
/// public address", "could not connect", "timed out" or "failed". The resolver's and
/// the socket's own words would tell a member which internal names exist, so they go
/// to the service's log only, for its operators.
fn describe(error: &reqwest::Error) -> String {
    let mut causes = String::new();
    let mut source = std::error::Error::source(error);
    let mut no_public_address = false;
    while let Some(cause) = source {
        no_public_address |= cause.is::<NoPublicAddress>();
        causes.push_str(": ");
        causes.push_str(&cause.to_string());
        source = cause.source();
    }
    let words = if no_public_address {
        "no public address"
    } else if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    tracing::info!(cause = %causes.chars().take(500).collect::<String>(), "webhook {words}");
    words.to_string()
}

/// The resolver's refusal of a name with no public address (told apart from a name
/// that does not resolve at all, which is "could not connect").
#[derive(Debug)]
struct NoPublicAddress;

impl std::fmt::Display for NoPublicAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no public address")
    }
}

impl std::error::Error for NoPublicAddress {}

/// Text fit for the log: valid UTF-8 (lossy), no NUL (PostgreSQL text holds none).
fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\0', "\u{fffd}")
}

/// A resolver that keeps a name's public addresses only.
struct PublicOnly {
    allow_private: bool,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if kept.is_empty() {
                return Err(Box::new(NoPublicAddress) as Box<dyn std::error::Error + Send + Sync>);
            }
            let addrs: Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}
