//! Settings of what the service publishes: its name, its time zone, the largest page,
//! the result cache, and how much a caller without a key may ask.

use std::time::Duration;

use chrono_tz::Tz;
use clap::Args;
use iq_actors::query::LIMIT_CAP;

use super::values::{seconds, Seconds};

const MIB: u64 = 1024 * 1024;

#[derive(Debug, Clone, Args)]
pub struct SiteSettings {
    /// Shown by /api/v1/config and on the website.
    #[arg(long, env, default_value = "AI Hardware Price Index")]
    pub site_name: String,

    /// Time zone of "today" for the delay cutoff (an IANA name).
    #[arg(long, env, default_value_t = chrono_tz::Asia::Shanghai)]
    pub service_tz: Tz,

    /// Server cap on a query's `limit` (1-5000).
    #[arg(long, env, value_parser = clap::value_parser!(u32).range(1..=i64::from(LIMIT_CAP)), default_value_t = LIMIT_CAP)]
    pub max_limit: u32,

    /// Result cache budget, in MiB; 0 switches the page cache off.
    #[arg(long, env, default_value_t = 256)]
    pub page_cache_mb: u64,

    /// Longest a cached result lives, in seconds.
    #[arg(long, env, value_parser = seconds(1..), default_value_t = Seconds(Duration::from_secs(300)))]
    pub page_cache_ttl_secs: Seconds,

    /// Queries and pages a visitor address or a signed-in user (all their sessions
    /// together) may ask for a minute without a key; 0: no limit.
    #[arg(long, env, default_value_t = 300)]
    pub website_per_minute: u32,

    /// The service's public address, such as https://indexes.example.com: reset and
    /// set-up links and the examples' address are built from it, never from a
    /// request's headers; when it is https, cookies are Secure unless COOKIE_SECURE=0.
    /// Unset: from the request (a development machine).
    #[arg(long, env, value_parser = public_url)]
    pub public_url: Option<String>,
}

/// An absolute `http` or `https` URL with a host and nothing after it but `/`, kept
/// without the trailing `/`.
fn public_url(text: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    let bare = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() || !bare {
        return Err("must be http(s)://host[:port], such as https://indexes.example.com".into());
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

impl SiteSettings {
    pub fn page_cache_bytes(&self) -> u64 {
        self.page_cache_mb.saturating_mul(MIB)
    }
}
