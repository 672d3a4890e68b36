//! `POST /api/v1/admin/imports` (multipart, field `file`: a `.xlsx` workbook or a `.csv`
//! file), `GET /api/v1/admin/imports` and `GET /api/v1/admin/imports/{id}`: quote
//! imports for administrators (D7, D8).
//!
//! The handler only checks the session and reads the upload within the size limit;
//! validation, the transaction and the record are the domain's
//! ([`iq_actors::imports`]).

use actix_web::{get, post, web, HttpRequest};
use iq_actors::imports::service::{DEFAULT_LISTED, MAX_LISTED};
use iq_actors::imports::Source;

use super::params::{self, ImportListQuery};
use crate::state::AppState;
use serde::Serialize;

use crate::http::{upload, Admin, Answer, HttpError, SessionGuard};
use crate::openapi::prelude::*;

/// Import a quote file
///
/// A `.xlsx` workbook (its first sheet) or a `.csv` file with the header `trade_date,
/// index_code, specification, weight, price` (any order and letter case). If any row
/// breaks a rule nothing is stored: 422 / 40002 lists the first 1,000 problems in
/// `errors`, with their total in `errors_total`. An accepted file replaces the quotes of
/// each (date, index) it holds and recalculates the indexes from the earliest affected
/// date, in one transaction. One import runs at a time (409 / 40901 meanwhile). A file
/// that is not `.xlsx`/`.csv`, cannot be read, or passes `IMPORT_MAX_MB` or the size
/// bounds is 400 / 40001. An optional text field `note` says why (at most 500
/// characters of safe text, else 400 / 40001 and nothing is imported): it is the
/// `reason` of every revision the import makes, and of its `index.revised` events
/// (D26). A row dated after the service's today is a row error. Every attempt is
/// recorded.
#[utoipa::path(
    tag = "imports",
    operation_id = "import_quotes",
    request_body(content = ImportUpload, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The file was accepted.", body = ImportOutcome),
        CallerRefusals,
        (status = 409, response = Conflict),
        (status = 422, response = ImportRejected),
    ),
    security(("session" = [], "csrf" = [])),
    extensions(("x-role" = json!("admin"))),
)]
#[post("/admin/imports")]
pub async fn import(
    guard: SessionGuard<Admin>,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let upload = upload::read(&req, payload, "file", &["note"], state.import_max_bytes).await?;
    let note = upload.field("note").map(str::to_owned);
    let progress = |stage: &str| tracing::info!(stage, "import");
    let outcome = state
        .importer
        .import(
            &guard.author(),
            Source::Http,
            &upload.file_name,
            (upload.bytes, note.as_deref()),
            &progress,
        )
        .await?;
    Ok(Answer(outcome))
}

/// List imports
///
/// Every attempt, newest first. `data` is the list itself, not a page object: ask for
/// the next page while a page comes back full.
#[utoipa::path(
    tag = "imports",
    operation_id = "list_imports",
    params(ImportListQuery),
    responses(
        (status = 200, description = "The imports.", body = Vec<ImportRecord>),
        CallerRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("admin"))),
)]
#[get("/admin/imports")]
pub async fn list(
    _: SessionGuard<Admin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let query: ImportListQuery = params::parse(req.query_string())?;
    let page = params::page(
        query.limit.as_deref(),
        query.offset.as_deref(),
        DEFAULT_LISTED,
        MAX_LISTED,
    )?;
    Ok(Answer(state.importer.page(page).await?))
}

/// One import
///
/// Its record, what it changed per index (accepted) or its listed problems (rejected).
#[utoipa::path(
    tag = "imports",
    operation_id = "import_detail",
    params(("id" = String, Path, description = "the import's id")),
    responses(
        (status = 200, description = "The import.", body = ImportDetail),
        ResourceRefusals,
    ),
    security(("session" = [])),
    extensions(("x-role" = json!("admin"))),
)]
#[get("/admin/imports/{id}")]
pub async fn detail(
    _: SessionGuard<Admin>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.importer.detail(&id).await?))
}
