//! `POST /api/v1/setup`, `/auth/login`, `/auth/logout` (D7).
//!
//! Once the service is initialised, `/setup` is answered 409 from memory before
//! anything else (D15): no body read, no hashing, no connection. Before that it is
//! limited per client address, and its password is hashed before any transaction.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use iq_actors::accounts::Credentials;
use iq_actors::caller::{Account, Role};
use iq_actors::{ApiError, ErrorCode};
use serde::Serialize;
use std::sync::atomic::Ordering;
use tracing::Span;

use super::AppState;
use crate::front::ShowConfig;
use crate::http::protection::Subject;
use crate::http::session::{self, Access};
use crate::http::{envelope, json_body, RequestId};

pub async fn setup(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let already = || ApiError::new(ErrorCode::Conflict, "the service is already initialised");
    if state.initialized.load(Ordering::Acquire) {
        return envelope::failure(&request_id, &already());
    }
    // The AuthActor's cached answer: one statement however many calls arrive at once.
    match state
        .front
        .send(ShowConfig {
            span: Span::current(),
        })
        .await
    {
        Ok(Ok(config)) if config.initialized => {
            state.initialized.store(true, Ordering::Release);
            return envelope::failure(&request_id, &already());
        }
        _ => {}
    }
    let limiter = &state.protection.setup;
    let subject = Subject::Address(state.client_ip(&req));
    if let Err(refused) = state.protection.admit(limiter, subject) {
        return envelope::refused(&request_id, &refused);
    }
    let result = async {
        let credentials: Credentials = json_body::parse(&req, payload).await?;
        state.accounts.setup(credentials).await
    }
    .await;
    if result.is_ok() {
        state.initialized.store(true, Ordering::Release);
    }
    envelope::respond(&request_id, result)
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
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        let credentials: Credentials = json_body::parse(&req, payload).await?;
        state
            .accounts
            .login(credentials, state.client_ip(&req))
            .await
    }
    .await;
    match result {
        Ok(opened) => {
            let cookie = session::cookie(
                &opened,
                state.cookie_secure,
                state.accounts.session_policy(),
            );
            let body = LoggedIn {
                csrf_token: opened.csrf.expose().to_string(),
                expires_at: opened.expires_at,
                user: opened.account,
            };
            let mut response = envelope::no_store(envelope::success(&request_id, body));
            // Building a cookie from plain ASCII cannot fail.
            let _ = response.add_cookie(&cookie);
            response
        }
        Err(error) => envelope::failure(&request_id, &error),
    }
}

#[derive(Serialize)]
struct LoggedOut {
    logged_out: bool,
}

pub async fn logout(
    req: HttpRequest,
    request_id: RequestId,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        session::require(&req, &state, Access::Write(Role::User)).await?;
        if let Some(id) = session::session_id(&req) {
            state.accounts.logout(&id).await?;
        }
        Ok(LoggedOut { logged_out: true })
    }
    .await;
    let ok = result.is_ok();
    let mut response = envelope::respond(&request_id, result);
    if ok {
        let _ = response.add_cookie(&session::removal_cookie(state.cookie_secure));
    }
    response
}
