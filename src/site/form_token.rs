//! CSRF tokens for the website's forms.
//!
//! A form's token is an HMAC, under a key derived from the server secret, of what the
//! browser already holds in an `HttpOnly` cookie: the session id once logged in, else a
//! random pre-session value (`iq_form`, set by the login page). A page can print the
//! token without the database, another site can neither read the cookie nor compute
//! the token, and a token stops working when its session ends. Tokens are compared in
//! constant time and never logged.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;
use iq_actors::accounts::token::Token;

use crate::http::session::session_id;

/// The pre-session cookie the login form's token is bound to.
pub const FORM_COOKIE: &str = "iq_form";
/// The form field that carries the token.
pub const FIELD: &str = "csrf";

/// What a request's form tokens are bound to: its session cookie, else its
/// pre-session cookie; `None` when it has neither.
pub fn binding(req: &HttpRequest) -> Option<String> {
    session_id(req).or_else(|| req.cookie(FORM_COOKIE).map(|c| c.value().to_owned()))
}

/// A new pre-session cookie: random, unreadable by scripts, never sent cross-site.
pub fn pre_session_cookie(secure: bool) -> Cookie<'static> {
    Cookie::build(FORM_COOKIE, Token::generate().expose().to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .finish()
}
