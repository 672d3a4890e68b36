//! Authentication (check-chain steps 1-4) and authorisation (steps 5-6).
//!
//! The [`AuthActor`] turns credentials into an [`crate::caller::Identity`]; [`authorize`]
//! then checks that identity against a validated query. Neither ever logs a credential.

mod actor;
mod authorize;

pub use actor::{AuthActor, Authenticate, ShowTiers, SiteStatus};
pub use authorize::authorize;
