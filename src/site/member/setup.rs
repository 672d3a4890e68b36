//! The first start's set-up page (D23): `/setup?token=...`, the one-time link the
//! service prints with its start-up lines while no super administrator exists. The form
//! (user name, password twice) creates the super administrator and signs them in; the
//! link then stops working. A plain form, no script needed, bound to a pre-session
//! cookie like the login's. `POST /api/v1/setup` keeps working beside it.

use std::sync::atomic::Ordering;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::{LoginRequest, LoginStep, UserPassword};
use serde::Deserialize;

use crate::http::envelope::status_for;
use crate::http::{anonymous_author, session};
use crate::site::chrome::Chrome;
use crate::site::form::Form;
use crate::site::pre_session;
use crate::site::respond::{is_refusal, see_other, status_with, PageResult};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "setup.html")]
struct SetupPage {
    chrome: Chrome,
    token: String,
    /// Whether the link works; the form is shown only then.
    works: bool,
    username: String,
    problem: Option<String>,
}

#[derive(Deserialize)]
pub struct SetupQuery {
    token: Option<String>,
}

const DEAD_LINK: &str = "This set-up link does not work: the service is set up already, or \
                         the link was never issued. Until it is set up, the service prints a \
                         new link each time it starts.";

fn show(req: &HttpRequest, state: &AppState, page: SetupPage, status: StatusCode) -> PageResult {
    pre_session::render(req, state, status, "login", |chrome| SetupPage {
        chrome,
        ..page
    })
}

/// `GET /setup?token=`: the form, or why the link does not work.
pub async fn setup_form(
    req: HttpRequest,
    query: web::Query<SetupQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let token = query.token.clone().unwrap_or_default();
    let works = state.accounts.setup_link_works(&token).await?;
    let problem = (!works).then(|| DEAD_LINK.to_owned());
    let status = status_with(&problem, StatusCode::BAD_REQUEST);
    let page = SetupPage {
        chrome: Chrome::new(&req, &state, None, "login"),
        token,
        works,
        username: String::new(),
        problem,
    };
    show(&req, &state, page, status)
}

/// `POST /setup`: creates the super administrator, signs them in and goes to the back
/// office; a refusal shows the form again with what went wrong.
pub async fn setup(req: HttpRequest, form: Form, state: web::Data<AppState>) -> PageResult {
    let (token, username) = (form.text("token"), form.text("username"));
    let created = match form.confirmed("password", "The password") {
        Ok(password) => {
            let credentials = UserPassword {
                username: username.clone(),
                password,
            };
            state
                .accounts
                .setup_with_link(&anonymous_author(), &token, credentials)
                .await
        }
        Err(error) => Err(error),
    };
    match created {
        Ok(_) => {
            state.initialized.store(true, Ordering::Release);
            let request = LoginRequest {
                username: username.clone(),
                password: form.text("password"),
                code: None,
            };
            // A new super administrator has no second factor yet.
            let opened = state
                .accounts
                .login(request, &state.origin(&req))
                .await
                .and_then(LoginStep::opened)?;
            let cookie = session::cookie(
                &opened,
                state.cookie_secure,
                state.accounts.session_policy(),
            );
            Ok(see_other("/admin").cookie(cookie).finish())
        }
        Err(error) if is_refusal(&error) => {
            let works = state.accounts.setup_link_works(&token).await?;
            let problem = if works {
                error.message.replace("field 'password'", "The password")
            } else {
                DEAD_LINK.to_owned()
            };
            let page = SetupPage {
                chrome: Chrome::new(&req, &state, None, "login"),
                token,
                works,
                username,
                problem: Some(problem),
            };
            show(&req, &state, page, status_for(error.code))
        }
        Err(error) => Err(error.into()),
    }
}
