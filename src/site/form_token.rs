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
use hmac::{Hmac, Mac};
use iq_actors::accounts::token::Token;
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::http::session::session_id;

/// The pre-session cookie the login form's token is bound to.
pub const FORM_COOKIE: &str = "iq_form";
/// The form field that carries the token.
pub const FIELD: &str = "csrf";

pub struct FormTokens {
    key: Hmac<Sha256>,
}

impl FormTokens {
    /// Keys derived from `secret` (the key secret, the same on every instance, so a
    /// form rendered by one instance is accepted by another).
    pub fn new(secret: &[u8]) -> Self {
        let mut derive = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
        derive.update(b"iq website form tokens v1");
        let key = derive.finalize().into_bytes();
        FormTokens {
            key: Hmac::new_from_slice(&key).expect("HMAC takes any key"),
        }
    }

    /// The token for forms of a browser holding `binding`.
    pub fn token(&self, binding: &str) -> String {
        let mut mac = self.key.clone();
        mac.update(binding.as_bytes());
        mac.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `presented` is the token of `binding`, in constant time.
    pub fn verify(&self, binding: &str, presented: &str) -> bool {
        let expected = self.token(binding);
        expected.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_only_for_its_binding_and_secret() {
        let forms = FormTokens::new(b"a server secret of some length");
        let token = forms.token("session-a");
        assert_eq!(token.len(), 64);
        assert!(forms.verify("session-a", &token));
        assert!(!forms.verify("session-b", &token));
        assert!(!forms.verify("session-a", ""));
        assert!(!forms.verify("session-a", &token[..63]));
        let other = FormTokens::new(b"another server secret entirely");
        assert!(!other.verify("session-a", &token));
    }
}
