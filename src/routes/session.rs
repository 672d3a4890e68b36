//! `POST /api/v1/setup`, `/auth/login`, `/auth/logout` (D7).

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use iq_actors::accounts::Credentials;
use iq_actors::caller::{Account, Role};
use serde::Serialize;

use super::AppState;
use crate::http::session::{self, Access};
use crate::http::{envelope, json_body, RequestId};

pub async fn setup(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        let credentials: Credentials = json_body::parse(&req, payload).await?;
        state.accounts.setup(credentials).await
    }
    .await;
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
            let mut response = envelope::success(&request_id, body);
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
