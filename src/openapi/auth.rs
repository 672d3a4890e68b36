//! The schemas of `POST /api/v1/setup`, `/auth/login`, `/auth/logout`, `/auth/password`
//! and `/auth/sessions` (handled in `src/routes/session.rs`): the first super
//! administrator, website sessions and one's password (D7, D15, D23).

// Each derives its schema where it is defined, in the domain crate (its `openapi`
// feature).
pub use iq_actors::accounts::{
    LoginRequest, PasswordChange, PasswordChanged, SessionView, SetupRequest,
};
pub use iq_actors::caller::{Account, Role};
