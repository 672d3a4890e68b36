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
use std::time::Duration;

use iq_actors::webhooks::destination::{check_url, is_public};
use iq_actors::webhooks::{Answered, Transport};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The whole attempt, connection to the answer's last byte kept.
const TIMEOUT: Duration = Duration::from_secs(15);
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
            .timeout(TIMEOUT)
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

/// What went wrong, in words, with the causes reqwest wraps (the resolver's refusal is
/// one of them).
fn describe(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else {
        "failed"
    };
    let mut text = kind.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(500).collect()
}

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
                return Err(format!("{host} resolves to no public address").into());
            }
            let addrs: Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}
