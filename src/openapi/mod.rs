//! What the OpenAPI 3.1 document of the HTTP API says besides its operations (the
//! `/docs` page that renders it is the website's: `site::public::reference`).
//!
//! The operations are described where they are handled: `#[utoipa::path]` on each
//! handler in `src/routes/`, collected from the router that mounts them (see
//! `routes::reference`), their query parameters derived on the structs that read them
//! (`routes::params`). Here: the document's frame ([`base`]: info, tags, shared
//! responses), the schemas of what the handlers take and answer (derived on the domain
//! types and the answers themselves and re-exported here; only the multipart upload,
//! which has no type, is described by hand; all checked against the real answers by
//! `tests/api/openapi/`; [`prelude`] is what a handler's attribute names), and what is
//! read from the code when the document is finished ([`finish`]): the datasets from the
//! catalogue ([`query`]), the error codes from `ErrorCode` and their statuses from
//! `status_for` ([`errors`]), the envelope and the common headers. It must never mount
//! a route or name a handler.

mod admin;
mod auth;
mod described;
mod envelope;
pub mod errors;
mod headers;
mod imports;
mod keys;
pub mod query;
pub mod security;
mod tushare;

use utoipa::openapi::path::Operation;
use utoipa::openapi::OpenApi as Document;
use utoipa::{Modify, OpenApi};

use described::Described;
use envelope::Wrap;
use headers::Common;
use query::Catalogue;
use security::Schemes;

const DESCRIPTION: &str = "Market data of the AI-hardware price indexes (`POST /api/v1/query`), \
the site's configuration and a caller's entitlements, what was published or revised (the \
event feed and members' signed webhooks), website sessions, members' API keys, and the \
back office (users, keys, tiers, indexes, the trading calendar, quote imports, every \
account's webhooks).\n\n\
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
does not take answers 404 / 40401, like an unknown path; `HEAD` is answered wherever `GET` is, \
without the body.";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "AI Hardware Price Index API",
        version = env!("CARGO_PKG_VERSION"),
        description = DESCRIPTION,
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
        (name = "auth", description = "The first super administrator, website sessions, and one's own password and sessions."),
        (name = "keys", description = "A signed-in member's own API keys."),
        (name = "events", description = "What was published or revised, as it happens: the event feed of a key's owner, and a member's signed webhooks."),
        (name = "admin", description = "The back office: users, every key, tiers, index settings, the trading calendar, the audit trail."),
        (name = "imports", description = "Quote files, all or nothing, and the record of every attempt."),
        (name = "operations", description = "Probes, metrics and this document; no credentials."),
    ),
)]
struct ApiDoc;

/// The document's frame: info, tags and the shared components, no operation yet.
pub fn base() -> Document {
    ApiDoc::openapi()
}

/// The document with the router's operations in it, finished from the code: the
/// security schemes, the catalogue's datasets, the envelope around every answer and the
/// headers every answer carries.
pub fn finish(mut document: Document) -> Document {
    for modifier in [
        &Schemes as &dyn Modify,
        &Described,
        &Catalogue,
        &Wrap,
        &Common,
    ] {
        modifier.modify(&mut document);
    }
    document
}

/// What the handlers' `#[utoipa::path]` attributes name: the schemas of bodies and
/// answers, the shared error responses and the list parameters. A route file imports
/// it whole.
pub mod prelude {
    pub use super::admin::*;
    pub use super::auth::*;
    pub use super::errors::{
        BadRequest, CallerRefusals, Conflict, Forbidden, ImportRejected, InternalError, NotFound,
        NotReady, ResourceRefusals, TooManyRequests, Unauthorized,
    };
    pub use super::imports::*;
    pub use super::keys::*;
    pub use super::query::{QueryPage, QueryRequest};
    pub use super::tushare::{TushareAnswer, TushareRequest};
}

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/v1/openapi.json";

/// The query endpoint's path, whose answers carry the rate-limit headers.
const QUERY_PATH: &str = "/api/v1/query";

/// A schema of type `ty` with its description.
fn typed(
    ty: impl Into<utoipa::openapi::schema::SchemaType>,
    description: &str,
) -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(ty)
        .description(Some(description))
}

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
