//! Authentication (check-chain steps 1-4) and authorisation (steps 5-6).
//!
//! The [`AuthActor`] turns credentials into an [`crate::caller::Identity`]; [`authorize`]
//! then checks that identity against a validated query. Neither ever logs a credential.

mod actor;
mod authorize;

pub use actor::{AuthActor, Authenticate, SiteStatus};
pub use authorize::authorize;

/// Failed logins allowed per user name per calendar minute (D6).
pub const LOGIN_FAILURES_PER_MINUTE: u32 = 5;
