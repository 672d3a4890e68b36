//! Pages whose form is sent before any session exists (login, the first start's set-up,
//! a password reset link): the form's token must be bound to a cookie the browser holds,
//! so a browser holding none gets a fresh pre-session cookie with the page.

use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::HttpRequest;

use super::chrome::Chrome;
use super::form_token::{binding, pre_session_cookie};
use super::respond::{render, Caching, PageResult};
use crate::state::AppState;

/// Puts the form's token in `chrome` and answers the pre-session cookie to set with the
/// page when the browser holds no cookie to bind the token to.
pub fn prepare(
    req: &HttpRequest,
    state: &AppState,
    chrome: &mut Chrome,
) -> Option<Cookie<'static>> {
    let fresh = binding(req)
        .is_none()
        .then(|| pre_session_cookie(state.cookie_secure));
    if let Some(cookie) = &fresh {
        chrome.form_token = state.site.forms.token(cookie.value());
    }
    fresh
}

/// `page` rendered (never cached but for this browser) with the cookie [`prepare`]
/// answered, if any.
pub fn render_with(
    page: &impl askama::Template,
    status: StatusCode,
    cookie: Option<Cookie<'static>>,
) -> PageResult {
    let mut response = render(page, status, Caching::Private)?;
    if let Some(cookie) = cookie {
        response
            .add_cookie(&cookie)
            .map_err(iq_actors::ApiError::internal)?;
    }
    Ok(response)
}
