//! The schemas of `POST /api/v1/setup`, `/auth/login` and `/auth/logout` (handled in
//! `src/routes/session.rs`): the first super administrator and website sessions (D7,
//! D15).

// Each derives its schema where it is defined, in the domain crate (its `openapi`
// feature).
pub use iq_actors::accounts::Credentials;
pub use iq_actors::caller::{Account, Role};
