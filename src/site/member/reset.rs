//! The password reset link's page (D23): `/reset?token=...`, issued by a super
//! administrator, where the user sets a new password (twice) without being signed in.
//! The link works once and for 24 hours; using it ends every session of the user. The
//! page works without script, its form bound to a pre-session cookie like the login's.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use crate::http::envelope::status_for;
use crate::http::RequestId;
use crate::site::chrome::Chrome;
use crate::site::form::Form;
use crate::site::pre_session;
use crate::site::respond::{is_refusal, status_with, PageResult};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "reset.html")]
struct ResetPage {
    chrome: Chrome,
    token: String,
    /// Whose link it is; `None` when it does not work.
    username: Option<String>,
    problem: Option<String>,
    done: bool,
}

#[derive(Deserialize)]
pub struct ResetQuery {
    token: Option<String>,
}

/// What a dead link says, on the page and in the JSON error alike.
const DEAD_LINK: &str = "This reset link does not work: it was used, it expired, a newer one \
                         replaced it, or it was never issued. Ask an administrator for a new one.";

/// `GET /reset?token=`: the form, or why the link does not work.
pub async fn reset_form(
    req: HttpRequest,
    query: web::Query<ResetQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let token = query.token.clone().unwrap_or_default();
    let username = state.accounts.reset_holder(&token).await?;
    let problem = username.is_none().then(|| DEAD_LINK.to_owned());
    let status = status_with(&problem, StatusCode::BAD_REQUEST);
    pre_session::render(&req, &state, status, "login", |chrome| ResetPage {
        chrome,
        token,
        username,
        problem,
        done: false,
    })
}

/// `POST /reset`: the token and the new password twice.
pub async fn reset(req: HttpRequest, form: Form, state: web::Data<AppState>) -> PageResult {
    let token = form.text("token");
    let result = match form.confirmed("new_password", "The new password") {
        Ok(new) => {
            let request_id = RequestId::current().shared();
            state.accounts.reset_password(request_id, &token, new).await
        }
        Err(error) => Err(error),
    };
    match result {
        Ok(_) => pre_session::render(&req, &state, StatusCode::OK, "login", |chrome| ResetPage {
            chrome,
            token: String::new(),
            username: None,
            problem: None,
            done: true,
        }),
        Err(error) if is_refusal(&error) => {
            let username = state.accounts.reset_holder(&token).await?;
            let problem = if username.is_some() {
                error
                    .message
                    .replace("field 'password'", "The new password")
            } else {
                DEAD_LINK.to_owned()
            };
            pre_session::render(&req, &state, status_for(error.code), "login", |chrome| {
                ResetPage {
                    chrome,
                    token,
                    username,
                    problem: Some(problem),
                    done: false,
                }
            })
        }
        Err(error) => Err(error.into()),
    }
}
