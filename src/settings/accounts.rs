//! Settings of credentials: the secret API keys are hashed with, and how long a
//! website session lives and whether its cookie needs TLS.

use chrono::TimeDelta;
use clap::Args;
use iq_actors::accounts::SessionPolicy;

use super::values::{KeySecret, KeySecretParser};

#[derive(Debug, Clone, Args)]
pub struct AccountsConfig {
    /// Server secret API keys are hashed with (HMAC-SHA-256), at least 32 characters;
    /// required with DATABASE_URL, the same on every instance; changing it invalidates
    /// every key. Unset with the embedded cluster: generated into its data folder.
    #[arg(long, env, hide_env_values = true, value_parser = KeySecretParser)]
    pub key_secret: Option<KeySecret>,

    /// Mark the cookies `Secure` (set it whenever TLS is in front). Unset: on when
    /// PUBLIC_URL is https, off otherwise.
    #[arg(long, env, num_args = 0..=1, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub cookie_secure: Option<bool>,

    /// `POST /api/v1/setup` also needs the set-up token printed at start (`{"token"}`),
    /// so that no one else can claim a new service first (D28).
    #[arg(long, env, num_args = 0..=1, default_value_t = false, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub setup_token_required: bool,

    /// A session unused this many minutes expires.
    #[arg(long, env, value_parser = clap::value_parser!(u32).range(1..),
          default_value_t = whole(SessionPolicy::default().idle.num_minutes()))]
    pub session_idle_minutes: u32,

    /// A session ends this many hours after login, however active.
    #[arg(long, env, value_parser = clap::value_parser!(u32).range(1..),
          default_value_t = whole(SessionPolicy::default().absolute.num_hours()))]
    pub session_max_hours: u32,

    /// Require administrators and super administrators to sign in with a second factor
    /// (TOTP): until they set it up on their account's security page, the back office
    /// refuses them.
    #[arg(long, env, num_args = 0..=1, default_value_t = false, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub staff_two_factor: bool,
}

/// A positive count of whole units as the setting's type.
fn whole(units: i64) -> u32 {
    u32::try_from(units).unwrap_or(u32::MAX)
}

impl AccountsConfig {
    /// Whether cookies are `Secure`: COOKIE_SECURE when set, else whether the public
    /// address is https (D28).
    pub fn cookie_secure(&self, public_url: Option<&str>) -> bool {
        self.cookie_secure
            .unwrap_or_else(|| public_url.is_some_and(|url| url.starts_with("https://")))
    }

    pub fn sessions(&self) -> SessionPolicy {
        SessionPolicy {
            idle: TimeDelta::minutes(i64::from(self.session_idle_minutes)),
            absolute: TimeDelta::hours(i64::from(self.session_max_hours)),
            staff_two_factor: self.staff_two_factor,
        }
    }
}
