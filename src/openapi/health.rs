//! Probes, metrics and this document: `GET /healthz`, `/readyz`, `/metrics`,
//! `/api/v1/openapi.json` and `/docs`. None needs credentials or counts against a quota.

#![allow(dead_code)] // the functions only carry `#[utoipa::path]`; the types only derive schemas

use utoipa::ToSchema;

use super::errors::{BadRequest, NotReady};

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/v1/openapi.json";

/// Liveness
///
/// 200 while the process serves.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    operation_id = "healthz",
    responses((status = 200, description = "The process is up.", body = Up)),
)]
fn healthz() {}

/// Readiness
///
/// 200 when the database answers and has this build's migrations; otherwise 503 with
/// code 50000 and the reason, so a probe need not parse the body.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    operation_id = "readyz",
    responses(
        (status = 200, description = "Ready to serve.", body = Ready),
        (status = 503, response = inline(NotReady)),
    ),
)]
fn readyz() {}

/// Prometheus metrics
///
/// The OpenMetrics text exposition. Served on its own listener (`METRICS_ADDR`, default
/// `127.0.0.1:9464`), and on the public one only with `METRICS_ADDR=api`. What each
/// metric means: docs/operations.md.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    operation_id = "metrics",
    responses(
        (
            status = 200,
            description = "The metrics.",
            content_type = "application/openmetrics-text",
            body = String,
        ),
    ),
)]
fn metrics() {}

/// This document
///
/// The OpenAPI 3.1 description of the HTTP API, as `iq-service openapi` prints it. Not
/// in the envelope. The dataset catalogue is also in `x-datasets`, and every error code
/// with its status in the `ErrorCode` schema's `x-error-codes`.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "operations",
    operation_id = "openapi_document",
    responses(
        (status = 200, description = "The document.", content_type = "application/json", body = Object),
        (status = 400, response = BadRequest),
    ),
)]
fn openapi_document() {}

/// API reference page
///
/// This document as a web page, rendered on the server: the endpoints by tag, their
/// parameters and answers, the datasets and the error codes.
#[utoipa::path(
    get,
    path = "/docs",
    tag = "operations",
    operation_id = "docs_page",
    responses((status = 200, description = "The page.", content_type = "text/html", body = String)),
)]
fn docs_page() {}

/// `/healthz`: `{"status": "up"}`.
#[derive(ToSchema)]
pub struct Up {
    #[schema(inline)]
    status: UpStatus,
}

#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum UpStatus {
    Up,
}

/// `/readyz`: `{"status": "ready"}`.
#[derive(ToSchema)]
pub struct Ready {
    #[schema(inline)]
    status: ReadyStatus,
}

#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum ReadyStatus {
    Ready,
}
