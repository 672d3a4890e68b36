//! The website session on the HTTP side: the cookie, and the back office's guard
//! (session, then CSRF token for mutations, then role), per D7.

use actix_web::cookie::{time, Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::accounts::{ActiveSession, OpenedSession, SessionPolicy};
use iq_actors::caller::Role;
use iq_actors::{ApiError, ErrorCode};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::request_context::record_session;
use super::{envelope, json_body, RequestId};
use crate::routes::AppState;

pub const SESSION_COOKIE: &str = "iq_session";
pub const CSRF_HEADER: &str = "x-csrf-token";

/// What a back-office endpoint needs.
#[derive(Debug, Clone, Copy)]
pub enum Access {
    /// Reads: a session with at least this role.
    Read(Role),
    /// Mutations: also the session's CSRF token in `X-CSRF-Token`.
    Write(Role),
}

/// The session cookie's value, if the request carries one.
pub fn session_id(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE).map(|c| c.value().to_string())
}

/// 40101 without a session; 40102/40103 for an unknown or expired one; 40301 for a
/// missing or wrong CSRF token on a mutation, or a role that is too low.
pub async fn require(
    req: &HttpRequest,
    state: &AppState,
    access: Access,
) -> Result<ActiveSession, ApiError> {
    let Some(id) = session_id(req) else {
        return Err(ApiError::new(
            ErrorCode::AuthenticationRequired,
            "this endpoint needs a session: log in first",
        ));
    };
    let session = state.accounts.session(&id).await?.require()?;
    record_session(&tracing::Span::current(), session.account.user_id);
    let role = match access {
        Access::Read(role) => role,
        Access::Write(role) => {
            let presented = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok());
            if !session.csrf_matches(presented) {
                return Err(ApiError::forbidden(
                    "header 'X-CSRF-Token' is missing or does not match this session",
                ));
            }
            role
        }
    };
    if session.account.role < role {
        return Err(ApiError::forbidden(format!(
            "this needs the '{}' role",
            role.as_str()
        )));
    }
    Ok(session)
}

/// A back-office call: the guard, then (for calls with a body) the JSON body, then
/// `run`, answered in the envelope. The guard comes first so that a caller without the
/// right session learns nothing about the body's validity.
pub async fn answer<B, T>(
    req: &HttpRequest,
    request_id: &RequestId,
    state: &AppState,
    access: Access,
    payload: Option<web::Payload>,
    run: impl AsyncFnOnce(ActiveSession, B) -> Result<T, ApiError>,
) -> HttpResponse
where
    B: DeserializeOwned,
    T: Serialize,
{
    let result = async {
        let session = require(req, state, access).await?;
        // No id, code or tier name holds a NUL; PostgreSQL could not even compare one.
        if req
            .match_info()
            .iter()
            .any(|(_, segment)| segment.contains('\0'))
        {
            return Err(ApiError::new(ErrorCode::NotFound, "no such resource"));
        }
        let body = match payload {
            Some(payload) => json_body::parse(req, payload).await?,
            // Calls without a body take `()`, which reads from `null`.
            None => serde_json::from_value(serde_json::Value::Null).map_err(ApiError::internal)?,
        };
        run(session, body).await
    }
    .await;
    envelope::respond(request_id, result)
}

/// The session cookie with `value`: never readable by scripts, not sent on cross-site
/// requests other than top-level navigation.
fn session_cookie(value: String, secure: bool) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .finish()
}

/// The cookie a login sets; it lives as long as the session can.
pub fn cookie(opened: &OpenedSession, secure: bool, policy: SessionPolicy) -> Cookie<'static> {
    let mut cookie = session_cookie(opened.id.expose().to_string(), secure);
    cookie.set_max_age(time::Duration::seconds(
        policy.absolute.num_seconds().max(0),
    ));
    cookie
}

/// The cookie a logout sets: empty and already expired.
pub fn removal_cookie(secure: bool) -> Cookie<'static> {
    let mut cookie = session_cookie(String::new(), secure);
    cookie.make_removal();
    cookie
}
