//! Reading a submitted form: `application/x-www-form-urlencoded`, bounded in size and
//! pace like every body, its CSRF token checked before anything else is looked at, and
//! refused as a client error (400 page) when a field holds NUL or another control
//! character, before any handler or the database sees it. A page's path is checked
//! the same way by [`super::path_part`].
//!
//! A handler takes its form as an argument: [`Form`], or [`Sent`] where a guard must
//! answer before the form is looked at (the back office's pages, behind `Staff`).

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use iq_actors::ApiError;

use super::form_token::{self, FIELD};
use super::respond::PageError;
use crate::http::json_body::{media_type, read_bounded, RawBody};
use crate::state::AppState;

/// Forms here hold a few short fields.
const MAX_FORM_BYTES: usize = 16 * 1024;

/// A form's fields, in the order sent (a name may repeat, as checkboxes do).
pub struct Form(Vec<(String, String)>);

/// A handler that takes a `Form` runs only with one: the body is read and checked while
/// the request is extracted.
impl FromRequest for Form {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Form, PageError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let (req, payload) = (req.clone(), payload.take());
        Box::pin(async move {
            let state = req
                .app_data::<web::Data<AppState>>()
                .ok_or_else(|| ApiError::internal("the state is missing from the app data"))?;
            Form::read(&req, payload, state).await
        })
    }
}

/// A form sent by whoever the guard `G` lets through: the guard answers first (no
/// session, a role too low), then the form is read and its CSRF token checked.
pub struct Sent<G>(pub G, pub Form);

impl<G: FromRequest<Error = PageError> + 'static> FromRequest for Sent<G> {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Sent<G>, PageError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let guard = G::from_request(req, &mut Payload::None);
        let form = Form::from_request(req, payload);
        Box::pin(async move {
            let who = guard.await?;
            Ok(Sent(who, form.await?))
        })
    }
}

impl Form {
    /// The body of `req` as a form whose CSRF token matches this browser's cookie.
    async fn read(
        req: &HttpRequest,
        payload: impl RawBody,
        state: &AppState,
    ) -> Result<Form, PageError> {
        let is_form = media_type(req)
            .is_some_and(|m| m.eq_ignore_ascii_case("application/x-www-form-urlencoded"));
        if !is_form {
            return Err(PageError::bad_request(
                "This address takes a submitted form.",
            ));
        }
        let body = read_bounded(req, payload, MAX_FORM_BYTES).await?;
        let form = Form(
            form_urlencoded::parse(&body)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        );
        let verified = form_token::binding(req).is_some_and(|binding| {
            form.one(FIELD)
                .is_some_and(|token| state.site.forms.verify(&binding, token))
        });
        if !verified {
            return Err(PageError::forbidden(
                "This form has expired or did not come from this site. Reload the page and \
                 try again.",
            ));
        }
        // Names never hold a control character; values only the line breaks and tabs
        // of a text area (the key page's address list is one per line). What each
        // field may hold beyond that is its own rule's (names, descriptions).
        let stray = |c: char| c.is_control() && !matches!(c, '\t' | '\r' | '\n');
        if form
            .0
            .iter()
            .any(|(k, v)| k.contains(char::is_control) || v.contains(stray))
        {
            return Err(PageError::bad_request(
                "A field holds a control character (such as NUL), which no field takes.",
            ));
        }
        Ok(form)
    }

    /// The first value of `name`.
    pub fn one(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name` as sent, or an empty string: a field left out of the
    /// form reads as one left blank.
    pub fn text(&self, name: &str) -> String {
        self.one(name).unwrap_or_default().to_owned()
    }

    /// The password field `name` when `confirm_password` repeats it exactly; otherwise
    /// the refusal saying that `what` (as "The new password") and its confirmation
    /// differ, before anything is sent on.
    pub fn confirmed(&self, name: &str, what: &str) -> Result<String, ApiError> {
        let value = self.one(name).unwrap_or_default();
        if value != self.one("confirm_password").unwrap_or_default() {
            return Err(ApiError::invalid(format!(
                "{what} and its confirmation differ."
            )));
        }
        Ok(value.to_owned())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}
