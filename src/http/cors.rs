//! Cross-origin reads for browsers and notebooks (D16): `POST /api/v1/query`,
//! `GET /api/v1/membership`, `GET /api/v1/config` and the OpenAPI document (so editors
//! and generators on other origins can read it) answer cross-origin requests that
//! carry no cookie, to any origin (`*`), with a preflight that names the headers a key
//! caller sends and exposes the headers a client reads.
//!
//! It must never answer with credentials: a request with a cookie, and every other
//! endpoint (the back office above all), gets no CORS header, so a page on another
//! site can never act with a member's session.

use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::HttpResponse;

/// The endpoints open to cross-origin calls.
const OPEN: [&str; 4] = [
    "/api/v1/query",
    "/api/v1/membership",
    "/api/v1/config",
    "/api/v1/openapi.json",
];

const ALLOW_HEADERS: &str = "Content-Type, X-API-Key, Authorization";
const EXPOSE_HEADERS: &str = "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, \
                              X-RateLimit-Reset, Retry-After, RateLimit, RateLimit-Policy, \
                              X-Limit, X-Offset, X-Returned, X-Has-More";

/// Whether a request is a cross-origin one without a cookie to an open endpoint.
pub fn applies(path: &str, headers: &HeaderMap) -> bool {
    OPEN.contains(&path)
        && headers.contains_key(header::ORIGIN)
        && !headers.contains_key(header::COOKIE)
}

/// The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`) for an
/// open endpoint; `None` for anything else.
pub fn preflight(method: &Method, path: &str, headers: &HeaderMap) -> Option<HttpResponse> {
    if method != Method::OPTIONS
        || !headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        || !applies(path, headers)
    {
        return None;
    }
    let methods = if path == "/api/v1/query" {
        "POST"
    } else {
        "GET"
    };
    Some(
        HttpResponse::build(StatusCode::NO_CONTENT)
            .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
            .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, methods))
            .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, "86400"))
            .finish(),
    )
}

/// Adds the CORS headers to the answer of a request that [`applies`].
pub fn decorate(response: &mut HeaderMap) {
    response.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                header::HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    #[test]
    fn open_endpoints_answer_a_preflight_naming_the_headers() {
        let asked = headers(&[
            ("origin", "https://notebook.example"),
            ("access-control-request-method", "POST"),
        ]);
        let answer = preflight(&Method::OPTIONS, "/api/v1/query", &asked).expect("preflight");
        assert_eq!(answer.status(), 204);
        let allow = answer
            .headers()
            .get("access-control-allow-headers")
            .unwrap();
        assert_eq!(allow, ALLOW_HEADERS);
        assert!(preflight(&Method::OPTIONS, "/api/v1/keys", &asked).is_none());
    }

    #[test]
    fn never_with_a_cookie_or_outside_the_open_endpoints() {
        let with_cookie = headers(&[("origin", "https://x.example"), ("cookie", "iq_session=1")]);
        assert!(!applies("/api/v1/query", &with_cookie));
        let plain = headers(&[("origin", "https://x.example")]);
        assert!(!applies("/api/v1/admin/users", &plain));
        assert!(!applies("/api/v1/query", &HeaderMap::new()));
        assert!(applies("/api/v1/config", &plain));
        let mut out = HeaderMap::new();
        decorate(&mut out);
        assert_eq!(out.get("access-control-allow-origin").unwrap(), "*");
    }
}
