//! The website's part of the application state: its name, clock and time zone, the
//! keys of its form tokens, and the cache of rendered visitor pages. Types and what they
//! hold only: how pages are served from the cache and how tokens are bound to a browser
//! are the website's (`site::visitor_cache`, `site::form_token`).

use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use hmac::{Hmac, Mac};
use iq_actors::calendar::service_today;
use iq_actors::clock::Clock;
use iq_actors::coherent_cache::CoherentCache;
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The website's part of the application state.
pub struct Site {
    pub name: String,
    pub forms: FormTokens,
    pub clock: Arc<dyn Clock>,
    pub service_tz: chrono_tz::Tz,
    /// Rendered public pages for visitors.
    pub visitor_pages: VisitorPages,
    /// `PUBLIC_URL`, without a trailing `/`.
    pub public_url: Option<String>,
}

impl Site {
    /// Where the service is, for the links a page shows (`https://host`): `PUBLIC_URL`
    /// when set (D28: never from a request's headers, which a client chooses), else the
    /// request's own scheme and host (a development machine).
    pub fn base_url(&self, req: &actix_web::HttpRequest) -> String {
        match &self.public_url {
            Some(url) => url.clone(),
            None => {
                let info = req.connection_info();
                format!("{}://{}", info.scheme(), info.host())
            }
        }
    }

    /// Today in the service time zone (D5).
    pub fn today(&self) -> NaiveDate {
        service_today(self.clock.now(), self.service_tz)
    }
}

/// The keys of the website's CSRF tokens (`site::form_token` binds them to a browser).
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

/// Bytes of rendered pages kept at most.
const BUDGET_BYTES: u64 = 32 * 1024 * 1024;
/// A safety net only: changes reach the cache through [`PageInvalidator`].
const TTL: Duration = Duration::from_secs(600);

/// A page as rendered, split where its request id goes.
#[derive(Clone)]
pub struct Rendered {
    pub(crate) head: Arc<str>,
    pub(crate) tail: Arc<str>,
}

#[derive(Clone)]
pub struct VisitorPages {
    pub(crate) pages: Arc<CoherentCache<(String, NaiveDate), Rendered>>,
}

impl Default for VisitorPages {
    fn default() -> Self {
        VisitorPages {
            pages: Arc::new(CoherentCache::weighted(
                "visitor_pages",
                BUDGET_BYTES,
                TTL,
                |page: &Rendered| {
                    u32::try_from(page.head.len() + page.tail.len()).unwrap_or(u32::MAX)
                },
            )),
        }
    }
}

impl VisitorPages {
    pub fn invalidate_all(&self) {
        self.pages.invalidate_all();
    }
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
