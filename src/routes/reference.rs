//! The API's description, made from its router: every operation the router serves with
//! its `#[utoipa::path]`, collected by `utoipa-actix-web` from the same `service(...)`
//! calls that mount the handlers, then finished by [`crate::openapi::finish`] (the
//! catalogue's datasets, the envelope, the common headers). Served as JSON at
//! `GET /api/v1/openapi.json`, as a page at `GET /docs`, printed by `iq-service openapi`.
//!
//! The document is built once, on first use, and kept. A route mounted without its
//! description cannot exist: `service(...)` takes only described handlers.

use std::sync::LazyLock;

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::{get, App, HttpResponse};
use utoipa::openapi::OpenApi as Document;
use utoipa_actix_web::AppExt;

use crate::openapi;
use crate::openapi::prelude::*;
use crate::site::public::{docs_page, Reference};
use crate::site::respond::PageResult;

static DOCUMENT: LazyLock<Document> = LazyLock::new(|| {
    let (_, collected) = App::new()
        .into_utoipa_app()
        .openapi(openapi::base())
        .configure(|cfg| super::configure(cfg, true))
        .split_for_parts();
    openapi::finish(collected)
});

static JSON: LazyLock<String> =
    LazyLock::new(|| DOCUMENT.to_json().expect("the OpenAPI document serialises"));

static REFERENCE: LazyLock<Reference> = LazyLock::new(|| Reference::of(document()));

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

/// This document
///
/// The OpenAPI 3.1 description of the HTTP API, as `iq-service openapi` prints it. Not
/// in the envelope. The dataset catalogue is also in `x-datasets`, and every error code
/// with its status in the `ErrorCode` schema's `x-error-codes`.
#[utoipa::path(
    tag = "operations",
    operation_id = "openapi_document",
    responses(
        (status = 200, description = "The document.", content_type = "application/json", body = Object),
        (status = 400, response = BadRequest),
    ),
)]
#[get("/openapi.json")]
pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(ContentType::json())
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .body(json())
}

/// API reference page
///
/// This document as a web page, rendered on the server: the index of the endpoints by
/// tag (each tag's page has their parameters and answers), the datasets and the error
/// codes.
#[utoipa::path(
    tag = "operations",
    operation_id = "docs_page",
    responses((status = 200, description = "The page.", content_type = "text/html", body = String)),
)]
#[get("/docs")]
pub async fn docs() -> PageResult {
    docs_page(&REFERENCE, None)
}

/// A part of the API reference page
///
/// One group of endpoints (by its tag, as `query` or `admin`) in full, or `schemas`:
/// the parts the reference page's index links to. Anything else is a 404 page.
#[utoipa::path(
    tag = "operations",
    operation_id = "docs_section",
    params(("section" = String, Path, description = "a tag of the endpoints, or `schemas`")),
    responses(
        (status = 200, description = "The page.", content_type = "text/html", body = String),
        (status = 404, description = "No such part.", content_type = "text/html", body = String),
    ),
)]
#[get("/docs/{section}")]
pub async fn docs_section(section: actix_web::web::Path<String>) -> PageResult {
    docs_page(&REFERENCE, Some(&section))
}
