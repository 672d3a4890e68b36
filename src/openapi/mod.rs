//! The OpenAPI 3.1 document of the HTTP API, served at `GET /api/v1/openapi.json`,
//! rendered as a reference page at `GET /docs` and printed by `iq-service openapi`.
//!
//! The handlers in `src/routes/` stay as they are: each area's operations are declared
//! here with `#[utoipa::path]` on stub functions, beside the schemas of what they take
//! and answer (mirrors of the domain types, checked against the real answers by
//! `tests/api/openapi/`). What must never drift is read from the code itself when the
//! document is built: the datasets from the catalogue ([`query`]), the error codes from
//! `ErrorCode` and their statuses from `status_for` ([`errors`]), the list bounds from
//! the domain's constants ([`params`]). The test suite fails when a route of
//! `src/routes/mod.rs` is missing here.
//!
//! The document is built once, on first use, and kept ([`document`], [`json`]).

mod admin;
mod auth;
mod envelope;
pub mod errors;
mod headers;
mod health;
mod imports;
mod keys;
mod ordered;
mod page;
mod page_operations;
mod page_schemas;
mod page_text;
mod page_views;
mod params;
pub mod query;
mod security;
mod site;

use std::sync::LazyLock;

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::HttpResponse;
use utoipa::openapi::path::Operation;
use utoipa::openapi::OpenApi as Document;
use utoipa::OpenApi;

use envelope::Wrap;
use headers::Common;
use query::Catalogue;
use security::Schemes;

pub use page::docs_page;

const DESCRIPTION: &str = "Market data of the AI-hardware price indexes (`POST /api/v1/query`), \
the site's configuration and a caller's entitlements, website sessions, members' API keys, \
and the back office (users, keys, tiers, indexes, the trading calendar, quote imports).\n\n\
Every answer but this document, `/metrics` and `/docs` is a JSON envelope \
`{request_id, code, message, data}`: `code` 0 and `message` \"ok\" on success, otherwise \
a business code (the `ErrorCode` schema lists each with its HTTP status) and `data` null. \
The `request_id` is also in the `X-Request-Id` header of every answer; quote it when you \
report a problem.\n\n\
Callers are API keys (`X-API-Key`, or `Authorization: Bearer`), website sessions (the \
`iq_session` cookie, with `X-CSRF-Token` on back-office changes) and visitors (neither). \
A key is never accepted in the URL. Bodies are JSON (`Content-Type: application/json`, at \
most 64 KiB, no repeated names, no unknown fields) except the quote upload. Decimals are \
strings, dates `YYYYMMDD`, timestamps RFC 3339, ids opaque strings. A method an endpoint \
does not take answers 404 / 40401, like an unknown path.";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "AI Hardware Price Index API",
        version = env!("CARGO_PKG_VERSION"),
        description = DESCRIPTION,
    ),
    paths(
        query::query,
        site::config,
        site::membership,
        auth::setup,
        auth::login,
        auth::logout,
        keys::list_own_keys,
        keys::create_key,
        keys::delete_key,
        keys::rename_key,
        keys::rotate_key,
        keys::own_key_usage,
        admin::list_users,
        admin::create_user,
        admin::user_detail,
        admin::patch_user,
        admin::list_tiers,
        admin::replace_tier,
        admin::list_all_keys,
        admin::patch_key,
        admin::key_usage,
        admin::replace_calendar,
        admin::patch_index,
        imports::import_quotes,
        imports::list_imports,
        imports::import_detail,
        health::healthz,
        health::readyz,
        health::metrics,
        health::openapi_document,
        health::docs_page,
    ),
    components(
        schemas(envelope::Success, errors::ErrorEnvelope),
        responses(
            errors::BadRequest,
            errors::ImportRejected,
            errors::Unauthorized,
            errors::Forbidden,
            errors::NotFound,
            errors::Conflict,
            errors::TooManyRequests,
            errors::InternalError,
        ),
    ),
    tags(
        (name = "query", description = "Market data: `POST /api/v1/query` over the datasets of the catalogue."),
        (name = "site", description = "What a client reads before and after login."),
        (name = "auth", description = "The first super administrator, and website sessions."),
        (name = "keys", description = "A signed-in member's own API keys."),
        (name = "admin", description = "The back office: users, every key, tiers, index settings, the trading calendar."),
        (name = "imports", description = "Quote files, all or nothing, and the record of every attempt."),
        (name = "operations", description = "Probes, metrics and this document; no credentials."),
    ),
    modifiers(&Schemes, &Catalogue, &Wrap, &Common),
)]
struct ApiDoc;

static DOCUMENT: LazyLock<Document> = LazyLock::new(ApiDoc::openapi);

static JSON: LazyLock<String> =
    LazyLock::new(|| DOCUMENT.to_json().expect("the OpenAPI document serialises"));

/// The document, built on first use.
pub fn document() -> &'static Document {
    &DOCUMENT
}

/// The document as compact JSON, as `GET /api/v1/openapi.json` serves it.
pub fn json() -> &'static str {
    &JSON
}

/// The document as indented JSON, as `iq-service openapi` prints it.
pub fn pretty_json() -> String {
    DOCUMENT
        .to_pretty_json()
        .expect("the OpenAPI document serialises")
}

/// `GET /api/v1/openapi.json`: the document itself, not in the envelope.
pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(ContentType::json())
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .body(json())
}

/// The query endpoint's path, whose answers carry the rate-limit headers.
const QUERY_PATH: &str = "/api/v1/query";

/// Every operation of `openapi` with its path and method, to change in place.
fn operations_mut(openapi: &mut Document) -> Vec<(String, &'static str, &mut Operation)> {
    let mut operations = Vec::new();
    for (path, item) in openapi.paths.paths.iter_mut() {
        let utoipa::openapi::PathItem {
            get,
            put,
            post,
            delete,
            options,
            head,
            patch,
            trace,
            ..
        } = item;
        for (method, operation) in [
            ("get", get),
            ("put", put),
            ("post", post),
            ("delete", delete),
            ("options", options),
            ("head", head),
            ("patch", patch),
            ("trace", trace),
        ] {
            if let Some(operation) = operation.as_mut() {
                operations.push((path.clone(), method, operation));
            }
        }
    }
    operations
}
