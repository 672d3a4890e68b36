//! The schemas of `POST /api/v1/setup`, `/auth/login` and `/auth/logout` (handled in
//! `src/routes/session.rs`): the first super administrator and website sessions (D7,
//! D15).

#![allow(dead_code)] // mirrors: the types only derive schemas, for the handlers' `#[utoipa::path]`

use utoipa::ToSchema;

/// A user name and a password.
#[derive(ToSchema)]
pub struct Credentials {
    /// 3 to 64 characters of letters, digits, `.`, `_`, `@`, `-`; case-sensitive
    #[schema(min_length = 3, max_length = 64, pattern = "^[A-Za-z0-9._@-]{3,64}$")]
    username: String,
    /// 12 to 256 characters
    #[schema(min_length = 12, max_length = 256, format = Password)]
    password: String,
}

/// A signed-in account.
#[derive(ToSchema)]
pub struct Account {
    /// opaque
    id: String,
    username: String,
    role: Role,
}

/// A back-office role, lowest first.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum Role {
    User,
    Admin,
    SuperAdmin,
}
