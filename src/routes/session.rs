//! `POST /api/v1/setup`, `/auth/login`, `/auth/logout` (D7); one's password and
//! sessions: `/auth/password`, `/auth/sessions` (D23).
//!
//! Once the service is initialised, `/setup` is answered 409 from memory before
//! anything else (D15): no body read, no hashing, no connection. Before that it is
//! limited per client address, and its password is hashed before any transaction.

use std::sync::atomic::Ordering;

use actix_web::{delete, get, post, web, HttpRequest, Responder};
use chrono::{DateTime, Utc};
use iq_actors::{accounts, caller};
use iq_actors::{ApiError, ErrorCode};
use serde::Serialize;
use tracing::Span;
use utoipa::ToSchema;

use crate::front_actor::ShowConfig;
use crate::http::protection::KeylessSubject;
use crate::http::session;
use crate::http::{anonymous_author, Answer, AnyUser, Body, HttpError, SessionGuard};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Create the first super administrator
///
/// Once, on a fresh service: afterwards it answers 409 / 40901 at once, before reading
/// anything. Until then it is limited to 10 calls a minute per client address.
#[utoipa::path(
    tag = "auth",
    operation_id = "setup",
    request_body(content = SetupRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The super administrator.", body = UserView),
        (status = 400, response = BadRequest),
        (status = 409, response = Conflict),
        (status = 429, response = TooManyRequests),
        (status = 500, response = InternalError),
    ),
)]
#[post("/setup")]
pub async fn setup(
    req: HttpRequest,
    body: Body<accounts::SetupRequest>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let already = || ApiError::new(ErrorCode::Conflict, "the service is already initialised");
    if state.initialized.load(Ordering::Acquire) {
        return Err(already().into());
    }
    // The AuthActor's cached answer: one statement however many calls arrive at once.
    let config = state.front.send(ShowConfig {
        span: Span::current(),
    });
    if let Ok(Ok(config)) = config.await {
        if config.initialized {
            state.initialized.store(true, Ordering::Release);
            return Err(already().into());
        }
    }
    let subject = KeylessSubject::Address(state.client_ip(&req));
    state.protection.admit(&state.protection.setup, subject)?;
    let (credentials, token) = body.value()?.split();
    let created = match token {
        // The printed link's token: the same check as the set-up page's.
        Some(token) => {
            state
                .accounts
                .setup_with_link(&anonymous_author(), &token, credentials)
                .await?
        }
        None if state.setup_token_required => {
            return Err(ApiError::forbidden(
                "this service is set up with the token it printed at start: send it as \
                 'token' (SETUP_TOKEN_REQUIRED)",
            )
            .into())
        }
        None => {
            state
                .accounts
                .setup(&anonymous_author(), credentials)
                .await?
        }
    };
    state.initialized.store(true, Ordering::Release);
    Ok(Answer(created))
}

/// An open session.
#[derive(Serialize, ToSchema)]
struct LoggedIn {
    user: caller::Account,
    /// send it back as `X-CSRF-Token` on every back-office mutation
    csrf_token: String,
    /// when the session ends however active it is (`SESSION_MAX_HOURS`)
    #[schema(value_type = String, format = DateTime)]
    expires_at: DateTime<Utc>,
}

/// Log in
///
/// Opens a session: sets the cookie `iq_session` (`HttpOnly`, `SameSite=Lax`, `Path=/`,
/// `Secure` with `COOKIE_SECURE=1`) and answers the CSRF token every back-office
/// mutation must send back as `X-CSRF-Token`. An account with two-factor sign-in also
/// needs `code` (its authenticator's current code or an unused recovery code): without
/// it, or with a wrong one, 401 / 40102 says so. A wrong password and an unknown user name
/// get the same 401 / 40102; a disabled account 403 / 40301. After 5 failed logins for a
/// user name from one address, 20 from an address or 100 for a user name from all
/// addresses in a calendar minute, logins they cover answer 429 / 42901 until the
/// minute ends (D23).
#[utoipa::path(
    tag = "auth",
    operation_id = "login",
    request_body(content = LoginRequest, content_type = "application/json"),
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
        CallerRefusals,
        (status = 429, response = TooManyRequests),
    ),
)]
#[post("/auth/login")]
pub async fn login(
    req: HttpRequest,
    body: Body<accounts::LoginRequest>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let opened = state
        .accounts
        .login(body.value()?, &state.origin(&req))
        .await
        .and_then(accounts::LoginStep::opened)?;
    let cookie = session::cookie(
        &opened,
        state.cookie_secure,
        state.accounts.session_policy(),
    );
    let device = session::device_cookie(&opened, state.cookie_secure);
    let logged_in = LoggedIn {
        csrf_token: opened.csrf.expose().to_string(),
        expires_at: opened.expires_at,
        user: opened.account,
    };
    // The CSRF token is in the body: no cache may keep it.
    let mut answer = Answer(logged_in)
        .unstored()
        .append_header(("set-cookie", cookie.to_string()));
    if let Some(device) = device {
        answer = answer.append_header(("set-cookie", device.to_string()));
    }
    Ok(answer)
}

#[derive(Serialize, ToSchema)]
struct LoggedOut {
    /// always true
    logged_out: bool,
}

/// Log out
///
/// Ends the session and clears the cookie.
#[utoipa::path(
    tag = "auth",
    operation_id = "logout",
    responses(
        (
            status = 200,
            description = "The session is closed.",
            body = LoggedOut,
            headers(("Set-Cookie" = String, description = "an expired, empty `iq_session`")),
        ),
        CallerRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/auth/logout")]
pub async fn logout(
    req: HttpRequest,
    _: SessionGuard<AnyUser>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    if let Some(id) = session::session_id(&req) {
        state.accounts.logout(&id).await?;
    }
    let removal = session::removal_cookie(state.cookie_secure);
    Ok(Answer(LoggedOut { logged_out: true })
        .customize()
        .append_header(("set-cookie", removal.to_string())))
}

/// Change my password
///
/// The current password must be right (a wrong one is 400 / 40001 naming
/// `current_password`, and counts toward the login limits); the new one follows the
/// rules of a new account (12 to 256 characters). Every other session of the user ends;
/// this one stays.
#[utoipa::path(
    tag = "auth",
    operation_id = "change_password",
    request_body(content = PasswordChange, content_type = "application/json"),
    responses(
        (status = 200, description = "The password is changed.", body = PasswordChanged),
        CallerRefusals,
        (status = 429, response = TooManyRequests),
    ),
    security(("session" = [], "csrf" = [])),
)]
#[post("/auth/password")]
pub async fn change_password(
    req: HttpRequest,
    guard: SessionGuard<AnyUser>,
    body: Body<accounts::PasswordChange>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let changed = state
        .accounts
        .change_password(
            &guard.author(),
            guard.session.number,
            body.value()?,
            state.client_ip(&req),
        )
        .await?;
    Ok(Answer(changed))
}

/// My sessions
///
/// The signed-in user's live sessions, newest first: when and from which address each
/// was opened, its browser, when it was last used, and which one is asking.
#[utoipa::path(
    tag = "auth",
    operation_id = "list_sessions",
    responses(
        (status = 200, description = "The sessions.", body = Vec<SessionView>),
        CallerRefusals,
    ),
    security(("session" = [])),
)]
#[get("/auth/sessions")]
pub async fn sessions(
    guard: SessionGuard<AnyUser>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.accounts.sessions(&guard.session).await?))
}

#[derive(Serialize, ToSchema)]
struct SessionEnded {
    /// the session's number
    ended: String,
}

/// End one of my sessions
///
/// Ends the session with that number at once, wherever it is; someone else's or an
/// unknown number is 404 / 40401. Ending the asking session logs it out.
#[utoipa::path(
    tag = "auth",
    operation_id = "end_session",
    params(("id" = String, Path, description = "the session's number")),
    responses(
        (status = 200, description = "The session is ended.", body = SessionEnded),
        ResourceRefusals,
    ),
    security(("session" = [], "csrf" = [])),
)]
#[delete("/auth/sessions/{id}")]
pub async fn end_session(
    guard: SessionGuard<AnyUser>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    state
        .accounts
        .end_session(&guard.session.account, &id)
        .await?;
    Ok(Answer(SessionEnded {
        ended: id.into_inner(),
    }))
}
