//! The website session on the HTTP side: its cookie and the CSRF header's name (the
//! back office's guard, which checks them, is [`super::guard`]).

use actix_web::cookie::{time, Cookie, SameSite};
use actix_web::HttpRequest;
use iq_actors::accounts::{OpenedSession, SessionPolicy};

pub const SESSION_COOKIE: &str = "iq_session";
/// The device cookie (D28): a browser that signed in as a user before is not held by
/// that user name's login bound.
pub const DEVICE_COOKIE: &str = "iq_device";
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The session cookie's value, if the request carries one.
pub fn session_id(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE).map(|c| c.value().to_string())
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

/// The device cookie a sign-in sets (D28), for a year, when the login gave one; a
/// logout leaves it (it opens nothing).
pub fn device_cookie(opened: &OpenedSession, secure: bool) -> Option<Cookie<'static>> {
    let token = opened.device.clone()?;
    let mut cookie = Cookie::build(DEVICE_COOKIE, token)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .finish();
    cookie.set_max_age(time::Duration::seconds(
        iq_actors::accounts::device::DEVICE_VALID.num_seconds(),
    ));
    Some(cookie)
}

/// The device cookie's value, if the request carries one.
pub fn device(req: &HttpRequest) -> Option<String> {
    req.cookie(DEVICE_COOKIE).map(|c| c.value().to_string())
}

/// The cookie a logout sets: empty and already expired.
pub fn removal_cookie(secure: bool) -> Cookie<'static> {
    let mut cookie = session_cookie(String::new(), secure);
    cookie.make_removal();
    cookie
}
