//! Settings of the HTTP listeners: where to listen, how many workers, whom to believe
//! about client addresses, and the limits that keep one client from holding the server.

use clap::Args;
use ipnet::IpNet;

use super::values::{millis, proxy, seconds, Millis, Seconds};
use crate::http::body_pace::BodyPace;

/// The value of `METRICS_ADDR` that serves `/metrics` on the public listener.
const METRICS_ON_API: &str = "api";

#[derive(Debug, Clone, Args)]
pub struct HttpConfig {
    /// Address to serve the API and the website on.
    #[arg(long, env, default_value = "127.0.0.1:8080")]
    pub listen_addr: String,

    /// Where `/metrics` is served, off the public listener; `api`: on LISTEN_ADDR
    /// instead, public to whoever reaches it.
    #[arg(long, env, default_value = "127.0.0.1:9464")]
    pub metrics_addr: String,

    /// HTTP worker threads; 0: one per core.
    #[arg(long, env, default_value_t = 0)]
    pub workers: usize,

    /// Comma-separated addresses or CIDR ranges of reverse proxies whose
    /// X-Forwarded-For is believed.
    #[arg(long, env, value_delimiter = ',', value_parser = proxy)]
    pub trusted_proxies: Vec<IpNet>,

    /// Open connections one client address may hold; 0: no cap. Trusted proxies are
    /// not capped.
    #[arg(long, env, default_value_t = 256)]
    pub max_connections_per_ip: u32,

    /// Seconds any request body may take, whatever its size.
    #[arg(long, env, value_parser = seconds(..), default_value_t = BodyPace::default().grace.into())]
    pub body_grace_secs: Seconds,

    /// Beyond the grace, the bytes each second of a request body must bring on average.
    #[arg(long, env, default_value_t = BodyPace::default().min_bytes_per_sec)]
    pub body_min_bytes_per_sec: u64,

    /// On SIGTERM or SIGINT, how long to drain first (/readyz 503, `Connection: close`
    /// on every answer) before the server stops accepting; set it behind a load
    /// balancer (at most 120000).
    #[arg(long, env, value_parser = millis(..=120_000), default_value_t = Millis::default())]
    pub shutdown_delay_ms: Millis,
}

impl HttpConfig {
    /// The separate `/metrics` listener; `None`: `/metrics` is on the public one.
    pub fn metrics_listener(&self) -> Option<&str> {
        (!self.metrics_addr.eq_ignore_ascii_case(METRICS_ON_API)).then_some(&self.metrics_addr)
    }

    /// Worker threads asked for; `None`: one per core.
    pub fn workers(&self) -> Option<usize> {
        (self.workers > 0).then_some(self.workers)
    }

    pub fn body_pace(&self) -> BodyPace {
        BodyPace {
            grace: self.body_grace_secs.0,
            min_bytes_per_sec: self.body_min_bytes_per_sec,
        }
    }

    /// Serves `/metrics` on the public listener (`METRICS_ADDR=api`).
    pub fn metrics_on_api(&mut self) {
        self.metrics_addr = METRICS_ON_API.into();
    }
}
