//! Where a caller may present a key (D12), read once at the edge.
//!
//! A key travels in `X-API-Key`, or as `Authorization: Bearer <key>` (the same key, the
//! same checks). Anything ambiguous is refused before any key check: two key headers,
//! two different keys, another `Authorization` scheme, or a key in the URL, where
//! proxies and logs would keep it. A credential is never silently ignored, so a caller
//! who sent one is never served as a visitor by mistake.
//!
//! This module reads headers only; it must never log or echo a credential's value.

use actix_web::http::header::{HeaderMap, HeaderName, AUTHORIZATION};
use actix_web::HttpRequest;
use iq_actors::caller::Credentials;
use iq_actors::{ApiError, ErrorCode};

use super::session::session_id;

/// A name, not text: looking a header up by text parses the text on every request.
const KEY_HEADER: HeaderName = HeaderName::from_static("x-api-key");

/// Query-string names that look like a key (D12); matched without regard to case.
const URL_KEY_NAMES: [&str; 4] = ["api_key", "apikey", "token", "key"];

/// What a query presents: a key (from either header), else the session cookie, else
/// nothing; or a refusal (401 / 40102) when the key headers are ambiguous.
pub fn presented(req: &HttpRequest) -> Result<Credentials, ApiError> {
    match key(req.headers())? {
        Some(key) => Ok(Credentials::ApiKey(key)),
        None => Ok(website(req)),
    }
}

/// The identity of a Tushare call (D24): the body's `token` as the key, or a key
/// header; both at once are ambiguous; neither is the visitor (cookies are ignored).
pub fn tushare(req: &HttpRequest, token: Option<String>) -> Result<Credentials, ApiError> {
    match (key(req.headers())?, token) {
        (Some(_), Some(_)) => Err(refused(
            "the call carries a key twice (its token and a key header): send the token only",
        )),
        (Some(key), None) | (None, Some(key)) => Ok(Credentials::ApiKey(key)),
        (None, None) => Ok(Credentials::Anonymous),
    }
}

/// The website identity a request presents: its session cookie, or none.
pub fn website(req: &HttpRequest) -> Credentials {
    session_id(req).map_or(Credentials::Anonymous, Credentials::Session)
}

/// The key of `X-API-Key` or `Authorization: Bearer`, `None` when neither is sent.
fn key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let header_key = single(headers, KEY_HEADER)?;
    let bearer = match single(headers, AUTHORIZATION)? {
        None => None,
        Some(value) => Some(bearer_token(&value)?),
    };
    match (header_key, bearer) {
        (Some(a), Some(b)) if a != b => Err(refused(
            "the request carries two different keys (X-API-Key and Authorization): send one",
        )),
        (Some(key), _) | (None, Some(key)) => Ok(Some(key)),
        (None, None) => Ok(None),
    }
}

/// The one value of header `name`; two lines of it are a refusal. A value that is not
/// visible ASCII reads as empty, which the key check refuses as malformed.
fn single(headers: &HeaderMap, name: HeaderName) -> Result<Option<String>, ApiError> {
    let mut values = headers.get_all(&name);
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(refused(format!(
            "header '{name}' is sent more than once: send one key"
        )));
    }
    Ok(Some(first.to_str().unwrap_or_default().to_owned()))
}

/// The token of `Bearer <token>` (the scheme in any letter case).
fn bearer_token(value: &str) -> Result<String, ApiError> {
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if scheme.eq_ignore_ascii_case("bearer") {
        Ok(token.trim().to_owned())
    } else {
        Err(refused(
            "header 'Authorization' must be 'Bearer <key>'; or send the key in 'X-API-Key'",
        ))
    }
}

fn refused(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidCredentials, message)
}

/// A 40001 when the URL's query string names a key parameter (D12): the key belongs in
/// the `X-API-Key` header. The value is never read.
pub fn key_in_url(query_string: &str) -> Option<ApiError> {
    // Nearly every request has no query string: nothing to parse.
    if query_string.is_empty() {
        return None;
    }
    let names = actix_web::web::Query::<Vec<(String, String)>>::from_query(query_string)
        .map(|q| q.into_inner().into_iter().map(|(name, _)| name).collect())
        // Not decodable: judge the raw names, which is all a proxy log would show.
        .unwrap_or_else(|_| {
            query_string
                .split('&')
                .map(|pair| pair.split('=').next().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
        });
    let name = names
        .iter()
        .find(|name| URL_KEY_NAMES.iter().any(|k| k.eq_ignore_ascii_case(name)))?;
    Some(ApiError::invalid(format!(
        "a key may not be sent in the URL (parameter '{name}'): send it in the 'X-API-Key' \
         header, and replace it if the URL was shared or logged"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn presented_by(headers: &[(&str, &str)]) -> Result<Credentials, ApiError> {
        let mut req = TestRequest::default();
        for (name, value) in headers {
            req = req.append_header((*name, *value));
        }
        presented(&req.to_http_request())
    }

    fn key_of(headers: &[(&str, &str)]) -> String {
        match presented_by(headers) {
            Ok(Credentials::ApiKey(key)) => key,
            other => panic!("not a key: {other:?}"),
        }
    }

    fn code(headers: &[(&str, &str)]) -> u32 {
        presented_by(headers).unwrap_err().code.as_u32()
    }

    #[test]
    fn a_key_in_either_header_is_the_same_key() {
        assert_eq!(key_of(&[("X-API-Key", "iq_abc")]), "iq_abc");
        assert_eq!(key_of(&[("Authorization", "Bearer iq_abc")]), "iq_abc");
        assert_eq!(key_of(&[("Authorization", "bEaReR  iq_abc ")]), "iq_abc");
        assert_eq!(
            key_of(&[("X-API-Key", "iq_abc"), ("Authorization", "Bearer iq_abc")]),
            "iq_abc"
        );
        // Present but empty is still a key (refused later as malformed).
        assert_eq!(key_of(&[("X-API-Key", "")]), "");
        assert_eq!(key_of(&[("Authorization", "Bearer")]), "");
    }

    #[test]
    fn ambiguous_keys_are_refused() {
        assert_eq!(
            code(&[("X-API-Key", "iq_a"), ("Authorization", "Bearer iq_b")]),
            40102
        );
        assert_eq!(code(&[("X-API-Key", "iq_a"), ("X-API-Key", "iq_a")]), 40102);
        assert_eq!(
            code(&[("Authorization", "Bearer a"), ("Authorization", "Bearer a")]),
            40102
        );
        let basic = presented_by(&[("Authorization", "Basic dXNlcjpwYXNz")]).unwrap_err();
        assert_eq!(basic.code.as_u32(), 40102);
        assert!(basic.message.contains("X-API-Key"), "{}", basic.message);
    }

    #[test]
    fn no_key_is_the_website_identity() {
        assert!(matches!(presented_by(&[]), Ok(Credentials::Anonymous)));
        assert!(matches!(
            presented_by(&[("Cookie", "iq_session=abc")]),
            Ok(Credentials::Session(_))
        ));
    }

    #[test]
    fn keys_in_the_url_are_named_never_echoed() {
        for query in [
            "api_key=iq_secret",
            "x=1&apiKey=iq_secret",
            "APIKEY=1",
            "token=",
            "key",
            "a=1&api%5Fkey=iq_secret",
        ] {
            let error = key_in_url(query).unwrap_or_else(|| panic!("{query}"));
            assert_eq!(error.code.as_u32(), 40001);
            assert!(!error.message.contains("iq_secret"), "{}", error.message);
        }
        assert!(key_in_url("").is_none());
        assert!(key_in_url("keys=1&monkey=2&api=3").is_none());
    }
}
