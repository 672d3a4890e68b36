//! The account's security page (D23): change one's password (the current one, the new
//! one twice), and the list of one's sessions (when, from which address, which browser,
//! last used) with a button ending any of them. A change ends every other session.
//! Everything works without script; the forms carry their CSRF token.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use askama::Template;
use iq_actors::accounts::{
    ActiveSession, Enrolment, PasswordChange, SessionView, TwoFactorProof, TwoFactorStatus,
};
use iq_actors::caller::Account;
use serde::Deserialize;

use super::member;
use crate::http::author;
use crate::site::chrome::Chrome;
use crate::site::form::Form;
use crate::site::format::minute;
use crate::site::path_part::PathPart;
use crate::site::respond::{
    render, retry_after_if_limited, see_other, Caching, PageError, PageResult,
};
use crate::site::session;
use crate::state::AppState;

/// A session as a row of the list.
pub struct SessionLine {
    pub id: String,
    pub opened: String,
    pub last_seen: String,
    pub address: String,
    pub browser: String,
    pub current: bool,
}

impl From<SessionView> for SessionLine {
    fn from(s: SessionView) -> Self {
        SessionLine {
            id: s.id,
            opened: minute(s.created_at),
            last_seen: minute(s.last_seen_at),
            address: s.address.unwrap_or_else(|| "unknown".to_owned()),
            browser: s.user_agent.unwrap_or_else(|| "unknown".to_owned()),
            current: s.current,
        }
    }
}

#[derive(Template)]
#[template(path = "security.html")]
struct SecurityPage {
    chrome: Chrome,
    sessions: Vec<SessionLine>,
    problem: Option<String>,
    /// What the last change did, said once after it.
    notice: Option<String>,
    two_factor: TwoFactorStatus,
    /// A second factor being set up, waiting for its first code.
    enrolment: Option<Enrolment>,
    /// The set-up link as a QR code (inline SVG), while one is being set up.
    enrolment_qr: Option<String>,
    /// Recovery codes just issued, shown this once.
    recovery_codes: Vec<String>,
    /// A problem of the two-factor forms.
    two_factor_problem: Option<String>,
    /// Whether this user may not turn the second factor off (`STAFF_TWO_FACTOR`).
    must_keep: bool,
}

#[derive(Deserialize)]
pub struct SecurityQuery {
    changed: Option<u64>,
    ended: Option<String>,
}

/// The signed-in account and its session: what a change here proves itself by, keeps or
/// ends (the change's form is checked before this asks).
async fn member_session(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<(Account, ActiveSession), PageError> {
    let (_, account) = member(req, state).await?;
    Ok((account, session::required(req).await?))
}

async fn page(
    req: &HttpRequest,
    state: &AppState,
    session: &ActiveSession,
    problem: Option<String>,
    notice: Option<String>,
) -> Result<SecurityPage, PageError> {
    let sessions = state.accounts.sessions(session).await?;
    let account = &session.account;
    let two_factor = state.accounts.two_factor_status(account).await?;
    let enrolment = if two_factor.enabled {
        None
    } else {
        state.accounts.pending_two_factor(account).await?
    };
    let enrolment_qr = enrolment.as_ref().and_then(|e| {
        crate::site::qr_code::svg_of(&e.otpauth_uri, "QR code of the authenticator link")
    });
    Ok(SecurityPage {
        enrolment_qr,
        chrome: Chrome::new(req, state, Some(account), "security"),
        sessions: sessions.into_iter().map(SessionLine::from).collect(),
        problem,
        notice,
        two_factor,
        enrolment,
        recovery_codes: Vec::new(),
        two_factor_problem: None,
        must_keep: state.accounts.session_policy().staff_two_factor
            && account.role >= iq_actors::caller::Role::Admin,
    })
}

/// `GET /account/security`.
pub async fn security(
    req: HttpRequest,
    query: web::Query<SecurityQuery>,
    state: web::Data<AppState>,
) -> PageResult {
    let session = session::required(&req).await?;
    let notice = match (&query.changed, &query.ended) {
        (Some(n), _) => Some(format!(
            "Your password is changed; {n} other session(s) ended."
        )),
        (None, Some(_)) => Some("The session is ended.".to_owned()),
        (None, None) => None,
    };
    let page = page(&req, &state, &session, None, notice).await?;
    render(&page, StatusCode::OK, Caching::Private)
}

/// `POST /account/password`: the current password, the new one twice.
pub async fn change_password(
    req: HttpRequest,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (account, session) = member_session(&req, &state).await?;
    let result = match form.confirmed("new_password", "The new password") {
        Ok(new_password) => {
            let change = PasswordChange {
                current_password: form.text("current_password"),
                new_password,
            };
            let ip = state.client_ip(&req);
            state
                .accounts
                .change_password(&author(&account), session.number, change, ip)
                .await
        }
        Err(error) => Err(error),
    };
    match result {
        Ok(changed) => Ok(see_other(&format!(
            "/account/security?changed={}",
            changed.sessions_ended
        ))
        .finish()),
        Err(error) => refused(&req, &state, &session, error, Part::Password).await,
    }
}

/// Which part of the page a refusal is about: its problem is shown there.
enum Part {
    Password,
    TwoFactor,
}

/// The page again with what went wrong beside the form that asked (`Retry-After` on a
/// 429: a wrong password counts toward the login limits); a fault stays a fault.
async fn refused(
    req: &HttpRequest,
    state: &AppState,
    session: &ActiveSession,
    error: iq_actors::ApiError,
    part: Part,
) -> PageResult {
    let limited = error.clone();
    let answer = super::refused(error, |message| async move {
        let message = message
            .replace("field 'current_password'", "The password")
            .replace("field 'new_password'", "The new password")
            .replace("field 'code'", "The code");
        let mut page = page(req, state, session, None, None).await?;
        match part {
            Part::Password => page.problem = Some(message),
            Part::TwoFactor => page.two_factor_problem = Some(message),
        }
        Ok(page)
    })
    .await?;
    Ok(retry_after_if_limited(answer, &limited))
}

/// `POST /account/sessions/{id}/end`: ends one of the member's sessions; ending this
/// one leads to the login page.
pub async fn end_session(
    req: HttpRequest,
    id: PathPart,
    _: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (account, session) = member_session(&req, &state).await?;
    state.accounts.end_session(&account, &id).await?;
    if *id == session.number.to_string() {
        return Ok(see_other("/login").finish());
    }
    Ok(see_other("/account/security?ended=1").finish())
}

/// `POST /account/two-factor/start`: a new secret to add to an authenticator app.
pub async fn start_two_factor(req: HttpRequest, _: Form, state: web::Data<AppState>) -> PageResult {
    let (_, account) = member(&req, &state).await?;
    state.accounts.start_two_factor(&account).await?;
    Ok(see_other("/account/security#two-factor").finish())
}

/// `POST /account/two-factor/confirm`: the app's first code turns the factor on; the
/// page then shows the recovery codes, once.
pub async fn confirm_two_factor(
    req: HttpRequest,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (account, session) = member_session(&req, &state).await?;
    let proof = TwoFactorProof {
        password: form.text("current_password"),
        code: form.text("code"),
        ip: state.client_ip(&req),
    };
    match state
        .accounts
        .confirm_two_factor(&author(&account), session.number, proof)
        .await
    {
        Ok(codes) => {
            let mut page = page(&req, &state, &session, None, None).await?;
            page.recovery_codes = codes;
            page.notice = Some("Two-factor sign-in is on.".to_owned());
            render(&page, StatusCode::OK, Caching::Private)
        }
        Err(error) => refused(&req, &state, &session, error, Part::TwoFactor).await,
    }
}

/// `POST /account/two-factor/disable`: turns it off, proven by the password.
pub async fn disable_two_factor(
    req: HttpRequest,
    form: Form,
    state: web::Data<AppState>,
) -> PageResult {
    let (account, session) = member_session(&req, &state).await?;
    let password = form.text("current_password");
    match state
        .accounts
        .disable_two_factor(&author(&account), password, state.client_ip(&req))
        .await
    {
        Ok(()) => Ok(see_other("/account/security").finish()),
        Err(error) => refused(&req, &state, &session, error, Part::TwoFactor).await,
    }
}
