//! How callers prove who they are: an API key (`X-API-Key` or `Authorization: Bearer`),
//! or a website session (the cookie) with its CSRF token for back-office mutations.
//! Operations name these schemes in their `security`.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa::Modify;

use crate::http::session::SESSION_COOKIE;

pub const API_KEY: &str = "api_key";
pub const BEARER: &str = "bearer";
pub const SESSION: &str = "session";
pub const CSRF: &str = "csrf";

pub struct Schemes;

impl Modify for Schemes {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            API_KEY,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-API-Key",
                "An API key: `iq_` and 40 base62 characters (the last 6 a checksum). Create \
                 one in the member area or with `POST /api/v1/keys`. A present header always \
                 means key identity, even empty or with a session cookie; never send a key in \
                 the URL (400 / 40001).",
            ))),
        );
        components.add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("iq_ + 40 base62 characters")
                    .description(Some(
                        "The same API key as `Authorization: Bearer iq_...` (the scheme in any \
                         letter case). Both headers with different keys, or another scheme, are \
                         401 / 40102.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            SESSION,
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                SESSION_COOKIE,
                "A website session, set by `POST /api/v1/auth/login`. It expires after \
                 `SESSION_IDLE_MINUTES` without use or `SESSION_MAX_HOURS` after login \
                 (401 / 40103).",
            ))),
        );
        components.add_security_scheme(
            CSRF,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-CSRF-Token",
                "The session's CSRF token (`csrf_token` of the login answer), required with the \
                 session cookie on every back-office call but a GET (403 / 40301 otherwise).",
            ))),
        );
    }
}
