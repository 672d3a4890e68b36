//! Settings of webhook delivery: whether private destinations are allowed.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct WebhooksConfig {
    /// Allow webhook endpoints on `http` and on private or loopback addresses (tests,
    /// private networks). Off: `https` and public addresses only, checked at connect time.
    #[arg(long, env, num_args = 0..=1, default_value_t = false, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub webhook_allow_private: bool,
}
