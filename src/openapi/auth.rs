//! `POST /api/v1/setup`, `/auth/login`, `/auth/logout`: the first super administrator
//! and website sessions (D7, D15).

#![allow(dead_code)] // the functions only carry `#[utoipa::path]`; the types only derive schemas

use utoipa::ToSchema;

use super::admin::UserView;
use super::errors::{
    BadRequest, Conflict, Forbidden, InternalError, TooManyRequests, Unauthorized,
};

/// Create the first super administrator
///
/// Once, on a fresh service: afterwards it answers 409 / 40901 at once, before reading
/// anything. Until then it is limited to 10 calls a minute per client address.
#[utoipa::path(
    post,
    path = "/api/v1/setup",
    tag = "auth",
    operation_id = "setup",
    request_body(content = Credentials, content_type = "application/json"),
    responses(
        (status = 200, description = "The super administrator.", body = UserView),
        (status = 400, response = BadRequest),
        (status = 409, response = Conflict),
        (status = 429, response = TooManyRequests),
        (status = 500, response = InternalError),
    ),
)]
fn setup() {}

/// Log in
///
/// Opens a session: sets the cookie `iq_session` (`HttpOnly`, `SameSite=Lax`, `Path=/`,
/// `Secure` with `COOKIE_SECURE=1`) and answers the CSRF token every back-office
/// mutation must send back as `X-CSRF-Token`. A wrong password and an unknown user name
/// get the same 401 / 40102; a disabled account 403 / 40301. After 5 failed logins for a
/// user name, or 20 from an address, in a calendar minute, logins for it answer
/// 429 / 42901 until the minute ends.
#[utoipa::path(
    post,
    path = "/api/v1/auth/login",
    tag = "auth",
    operation_id = "login",
    request_body(content = Credentials, content_type = "application/json"),
    responses(
        (
            status = 200,
            description = "The session is open.",
            body = LoggedIn,
            headers(
                ("Set-Cookie" = String, description = "`iq_session=...`: the session cookie"),
                ("Cache-Control" = String, description = "`no-store`: the body holds the CSRF token"),
            ),
        ),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 429, response = TooManyRequests),
        (status = 500, response = InternalError),
    ),
)]
fn login() {}

/// Log out
///
/// Ends the session and clears the cookie.
#[utoipa::path(
    post,
    path = "/api/v1/auth/logout",
    tag = "auth",
    operation_id = "logout",
    responses(
        (
            status = 200,
            description = "The session is closed.",
            body = LoggedOut,
            headers(("Set-Cookie" = String, description = "an expired, empty `iq_session`")),
        ),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = InternalError),
    ),
    security(("session" = [], "csrf" = [])),
)]
fn logout() {}

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

/// An open session.
#[derive(ToSchema)]
pub struct LoggedIn {
    user: Account,
    /// send it back as `X-CSRF-Token` on every back-office mutation
    csrf_token: String,
    /// when the session ends however active it is (`SESSION_MAX_HOURS`)
    #[schema(format = DateTime)]
    expires_at: String,
}

#[derive(ToSchema)]
pub struct LoggedOut {
    /// always true
    logged_out: bool,
}
