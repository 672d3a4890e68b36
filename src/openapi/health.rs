//! The schemas of the probes (`GET /healthz`, `/readyz`, handled in
//! `src/routes/health.rs`), and where this document is served. None needs credentials or counts against a quota.

#![allow(dead_code)] // mirrors: the types only derive schemas, for the handlers' `#[utoipa::path]`

use utoipa::ToSchema;

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/v1/openapi.json";

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
