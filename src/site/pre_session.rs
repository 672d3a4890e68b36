//! Pages whose form is sent before any session exists (login, the first start's set-up,
//! a password reset link): the form's token must be bound to a cookie the browser holds,
//! so a browser holding none gets a fresh pre-session cookie with the page.

use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::HttpRequest;

use super::chrome::Chrome;
use super::form_token::{binding, pre_session_cookie};
use super::respond::{self, Caching, PageResult};
use crate::state::AppState;

/// The page `build` makes around its chrome (menu `nav`, no member: none is signed in
/// yet), its form's token bound to this browser, rendered with `status` and never cached
/// but for this browser; with a fresh pre-session cookie when the browser holds none.
pub fn render<T: askama::Template>(
    req: &HttpRequest,
    state: &AppState,
    status: StatusCode,
    nav: &'static str,
    build: impl FnOnce(Chrome) -> T,
) -> PageResult {
    let mut chrome = Chrome::new(req, state, None, nav);
    let cookie = prepare(req, state, &mut chrome);
    render_with(&build(chrome), status, cookie)
}

/// Puts the form's token in `chrome` and answers the pre-session cookie to set with the
/// page when the browser holds no cookie to bind the token to.
fn prepare(req: &HttpRequest, state: &AppState, chrome: &mut Chrome) -> Option<Cookie<'static>> {
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
fn render_with(
    page: &impl askama::Template,
    status: StatusCode,
    cookie: Option<Cookie<'static>>,
) -> PageResult {
    let mut response = respond::render(page, status, Caching::Private)?;
    if let Some(cookie) = cookie {
        response
            .add_cookie(&cookie)
            .map_err(iq_actors::ApiError::internal)?;
    }
    Ok(response)
}
