//! Extractors for the JSON endpoints that need a session (the back office's, and a
//! member's own keys and webhooks): who may call ([`SessionGuard`], at a least role) and
//! what they sent ([`Body`]), so a handler states its rule in its signature and holds a checked
//! session and a parsed body, or never runs.
//!
//! The order of D7 holds whatever order actix extracts in: [`Body`] never fails during
//! extraction (its parse result waits inside it until the handler asks, after the guard
//! has passed), so a caller without the right session learns nothing about the body.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{web, FromRequest, HttpRequest};
use iq_actors::accounts::{Accounts, ActiveSession};
use iq_actors::audit::Author;
use iq_actors::caller::{Account, Role};
use iq_actors::{ApiError, ErrorCode};
use serde::de::DeserializeOwned;

use super::error::HttpError;
use super::json_body;
use super::request_id::RequestId;
use super::request_span::record_session;
use super::session::{session_id, CSRF_HEADER};

/// The least role an endpoint needs.
pub trait Rank {
    const ROLE: Role;
}

/// Any signed-in user.
pub struct AnyUser;
/// Administrators and super administrators.
pub struct Admin;
/// Super administrators only.
pub struct SuperAdmin;

impl Rank for AnyUser {
    const ROLE: Role = Role::User;
}
impl Rank for Admin {
    const ROLE: Role = Role::Admin;
}
impl Rank for SuperAdmin {
    const ROLE: Role = Role::SuperAdmin;
}

/// A session with at least the role `R`; for any method but GET, also with the
/// session's CSRF token in `X-CSRF-Token` (D7). Refusals: 40101 without a session,
/// 40102/40103 for an unknown or expired one, 40301 for a missing or wrong CSRF token
/// or a role too low, and 40401 for a path segment holding NUL (no id, code or tier
/// name holds one; PostgreSQL could not even compare it).
pub struct SessionGuard<R: Rank> {
    pub session: ActiveSession,
    rank: PhantomData<R>,
}

impl<R: Rank> SessionGuard<R> {
    /// The signed-in user as the author of a change this request makes.
    pub fn author(&self) -> Author {
        author(&self.session.account)
    }
}

/// `account` as the author of a change the running request makes: its audit record's
/// who and `request_id` (D23).
pub fn author(account: &Account) -> Author {
    Author::signed_in(account.clone(), RequestId::current().shared())
}

/// The author of a change the running request makes with no one signed in (the
/// first start's set-up, a password reset link).
pub fn anonymous_author() -> Author {
    Author::anonymous(RequestId::current().shared())
}

impl<R: Rank> FromRequest for SessionGuard<R> {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, HttpError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let session = check::<R>(&req).await?;
            Ok(SessionGuard {
                session,
                rank: PhantomData,
            })
        })
    }
}

/// The request's active session, recorded on its span: 40101 without a session cookie,
/// 40102/40103 for an unknown or expired one, 40301 for a disabled account. The one
/// session check of the back office, its JSON endpoints and its pages alike.
pub async fn signed_in(req: &HttpRequest) -> Result<ActiveSession, ApiError> {
    let accounts = req
        .app_data::<web::Data<Accounts>>()
        .ok_or_else(|| ApiError::internal("the accounts are missing from the app data"))?;
    let Some(id) = session_id(req) else {
        return Err(ApiError::new(
            ErrorCode::AuthenticationRequired,
            "this endpoint needs a session: log in first",
        ));
    };
    let session = accounts.session(&id).await?.require()?;
    record_session(&tracing::Span::current(), session.account.user_id);
    Ok(session)
}

/// With `STAFF_TWO_FACTOR`, an administrators' endpoint or page refuses a session whose
/// user has no second factor yet (403 / 40301, saying where to set it up).
pub fn staff_second_factor<R: Rank>(
    req: &HttpRequest,
    session: &ActiveSession,
) -> Result<(), ApiError> {
    let required = req
        .app_data::<web::Data<Accounts>>()
        .is_some_and(|accounts| accounts.session_policy().staff_two_factor);
    if required && R::ROLE >= Role::Admin && !session.two_factor {
        return Err(ApiError::forbidden(
            "administrators must sign in with a second factor here: set it up on the \
             account's Password and sessions page (/account/security)",
        ));
    }
    Ok(())
}

async fn check<R: Rank>(req: &HttpRequest) -> Result<ActiveSession, ApiError> {
    let session = signed_in(req).await?;
    if req.method() != Method::GET {
        let presented = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok());
        if !session.csrf_matches(presented) {
            return Err(ApiError::forbidden(
                "header 'X-CSRF-Token' is missing or does not match this session",
            ));
        }
    }
    if session.account.role < R::ROLE {
        return Err(ApiError::forbidden(format!(
            "this needs the '{}' role",
            R::ROLE.as_str()
        )));
    }
    staff_second_factor::<R>(req, &session)?;
    if req
        .match_info()
        .iter()
        .any(|(_, segment)| segment.contains('\0'))
    {
        return Err(ApiError::new(ErrorCode::NotFound, "no such resource"));
    }
    Ok(session)
}

/// A JSON body read as [`json_body::parse`] reads it (JSON content type, bounded size
/// and pace, no repeated names, fields named in errors); the handler takes it with
/// [`Body::value`], after its guard.
pub struct Body<T>(Result<T, ApiError>);

impl<T> Body<T> {
    pub fn value(self) -> Result<T, ApiError> {
        self.0
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Body<T> {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, HttpError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move { Ok(Body(json_body::parse(&req, payload).await)) })
    }
}
