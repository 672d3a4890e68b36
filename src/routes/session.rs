//! `POST /api/v1/setup`, `/auth/login`, `/auth/logout` (D7).
//!
//! Once the service is initialised, `/setup` is answered 409 from memory before
//! anything else (D15): no body read, no hashing, no connection. Before that it is
//! limited per client address, and its password is hashed before any transaction.

use std::sync::atomic::Ordering;

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpRequest, Responder};
use chrono::{DateTime, Utc};
use iq_actors::accounts::Credentials;
use iq_actors::caller::Account;
use iq_actors::{ApiError, ErrorCode};
use serde::Serialize;
use tracing::Span;

use crate::front::ShowConfig;
use crate::http::protection::Subject;
use crate::http::session;
use crate::http::{Answer, AnyUser, BackOffice, Body, HttpError};
use crate::state::AppState;

pub async fn setup(
    req: HttpRequest,
    body: Body<Credentials>,
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
    let subject = Subject::Address(state.client_ip(&req));
    state.protection.admit(&state.protection.setup, subject)?;
    let created = state.accounts.setup(body.value()?).await?;
    state.initialized.store(true, Ordering::Release);
    Ok(Answer(created))
}

#[derive(Serialize)]
struct LoggedIn {
    user: Account,
    /// Send it back as `X-CSRF-Token` on every back-office mutation.
    csrf_token: String,
    expires_at: DateTime<Utc>,
}

pub async fn login(
    req: HttpRequest,
    body: Body<Credentials>,
    state: web::Data<AppState>,
) -> Result<impl Responder, HttpError> {
    let opened = state
        .accounts
        .login(body.value()?, state.client_ip(&req))
        .await
        .map_err(|error| match error.code {
            // The login limit (D6) holds until the next calendar minute.
            ErrorCode::RateLimited => {
                HttpError::retry_after(error, state.protection.seconds_to_next_minute())
            }
            _ => HttpError::from(error),
        })?;
    let cookie = session::cookie(
        &opened,
        state.cookie_secure,
        state.accounts.session_policy(),
    );
    let logged_in = LoggedIn {
        csrf_token: opened.csrf.expose().to_string(),
        expires_at: opened.expires_at,
        user: opened.account,
    };
    // The CSRF token is in the body: no cache may keep it.
    Ok(Answer(logged_in)
        .customize()
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .append_header(("set-cookie", cookie.to_string())))
}

#[derive(Serialize)]
struct LoggedOut {
    logged_out: bool,
}

pub async fn logout(
    req: HttpRequest,
    _: BackOffice<AnyUser>,
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
