//! The schemas of `/api/v1/keys` (handled in `src/routes/keys.rs`): a signed-in user's
//! own API keys (D7). Someone else's key, an unknown
//! one and a deleted one are all 404 / 40401, never 403, so ids cannot be probed.

// Each derives its schema where it is defined, in the domain crate (its `openapi`
// feature).
pub use iq_actors::accounts::usage::{AccountUsage, DayUsage, KeyUsage};
pub use iq_actors::accounts::{CreatedKey, KeyRename, KeyState, KeyView, NewKey};
