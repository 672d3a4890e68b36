//! The website's login and logout forms. A login opens the same session as
//! `POST /api/v1/auth/login`, under the same limits (D6); a refusal shows the form again
//! with what went wrong (a wrong name or password never says which).
//!
//! The form must never be shown without a CSRF token bound to a cookie: a browser
//! without one gets a pre-session cookie with the form.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::{LoginRequest, LoginStep, OpenedSession, PendingLogin};
use iq_actors::{ApiError, ErrorCode};

use crate::http::session::{self, session_id};
use crate::site::chrome::Chrome;
use crate::site::form::Form;
use crate::site::pre_session;
use crate::site::reading::read;
use crate::site::respond::{retry_after_if_limited, see_other, PageResult};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "login.html")]
struct Login {
    chrome: Chrome,
    username: String,
    problem: Option<String>,
    max_failures: i32,
}

/// `GET /login`: the form (a signed-in member goes to the account page instead).
pub async fn login_form(req: HttpRequest, state: web::Data<AppState>) -> PageResult {
    let reading = read(&req, &state, Vec::new()).await?;
    if reading.signed_in() {
        return Ok(see_other("/account").finish());
    }
    login_page(&req, &state, String::new(), None, StatusCode::OK)
}

/// The login form; a browser without a cookie to bind its token to gets one.
fn login_page(
    req: &HttpRequest,
    state: &AppState,
    username: String,
    problem: Option<String>,
    status: StatusCode,
) -> PageResult {
    pre_session::render(req, state, status, "login", |chrome| Login {
        chrome,
        username,
        problem,
        max_failures: iq_actors::accounts::login_limit::PER_USER_AND_ADDRESS,
    })
}

/// `POST /login`: opens a session and goes to the account page; an account with a
/// second factor gets the code form first; a refusal shows the form again with what
/// went wrong.
pub async fn login(req: HttpRequest, form: Form, state: web::Data<AppState>) -> PageResult {
    let username = form.text("username");
    let request = LoginRequest {
        username: username.clone(),
        password: form.text("password"),
        code: None,
    };
    match state.accounts.login(request, &state.origin(&req)).await {
        Ok(LoginStep::Opened(opened)) => signed_in(&state, &opened),
        Ok(LoginStep::NeedsCode(pending)) => code_page(&req, &state, pending, None, StatusCode::OK),
        Err(error) => refused(&error, |problem, status| {
            login_page(&req, &state, username, Some(problem), status)
        }),
    }
}

/// `POST /login/code`: the second step, the sign-in ticket and the code.
pub async fn login_code(req: HttpRequest, form: Form, state: web::Data<AppState>) -> PageResult {
    let ticket = form.text("ticket");
    let username = form.text("username");
    let code = form.text("code");
    match state
        .accounts
        .login_with_ticket(&ticket, &code, &state.origin(&req))
        .await
    {
        Ok(opened) => signed_in(&state, &opened),
        Err(error) if error.code == ErrorCode::CredentialsExpired => login_page(
            &req,
            &state,
            username,
            Some(error.message),
            StatusCode::UNAUTHORIZED,
        ),
        Err(error) => refused(&error, |problem, status| {
            let pending = PendingLogin { username, ticket };
            code_page(&req, &state, pending, Some(problem), status)
        }),
    }
}

/// The session cookie set, and on to the account page.
fn signed_in(state: &AppState, opened: &OpenedSession) -> PageResult {
    let cookie = session::cookie(opened, state.cookie_secure, state.accounts.session_policy());
    let mut response = see_other("/account");
    response.cookie(cookie);
    if let Some(device) = session::device_cookie(opened, state.cookie_secure) {
        response.cookie(device);
    }
    Ok(response.finish())
}

/// A refused login step as the page `show` renders it with the problem in words;
/// `Retry-After` on a 429; a fault of the service stays a fault.
fn refused(error: &ApiError, show: impl FnOnce(String, StatusCode) -> PageResult) -> PageResult {
    let status = crate::http::envelope::status_for(error.code);
    if status.is_server_error() {
        return Err(error.clone().into());
    }
    let problem = match error.code {
        ErrorCode::InvalidCredentials if error.message.contains("two-factor") => {
            "Wrong, expired or already used code.".to_owned()
        }
        ErrorCode::InvalidCredentials => "Wrong user name or password.".to_owned(),
        _ => error.message.clone(),
    };
    Ok(retry_after_if_limited(show(problem, status)?, error))
}

#[derive(Template)]
#[template(path = "login_code.html")]
struct CodePage {
    chrome: Chrome,
    username: String,
    ticket: String,
    problem: Option<String>,
}

/// The second step's form: the authenticator's code or a recovery code.
fn code_page(
    req: &HttpRequest,
    state: &AppState,
    pending: PendingLogin,
    problem: Option<String>,
    status: StatusCode,
) -> PageResult {
    pre_session::render(req, state, status, "login", |chrome| CodePage {
        chrome,
        username: pending.username,
        ticket: pending.ticket,
        problem,
    })
}

/// `POST /logout`: ends the session and goes home.
pub async fn logout(req: HttpRequest, _: Form, state: web::Data<AppState>) -> PageResult {
    if let Some(id) = session_id(&req) {
        state.accounts.logout(&id).await?;
    }
    Ok(see_other("/")
        .cookie(session::removal_cookie(state.cookie_secure))
        .finish())
}
