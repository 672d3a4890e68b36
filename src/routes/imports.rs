//! `POST /api/v1/admin/imports` (multipart, field `file`: a `.xlsx` workbook or a `.csv`
//! file), `GET /api/v1/admin/imports` and `GET /api/v1/admin/imports/{id}`: quote
//! imports for administrators (D7, D8).
//!
//! The handler only checks the session and reads the upload within the size limit;
//! validation, the transaction and the record are the domain's
//! ([`iq_actors::imports`]).

use actix_web::{web, HttpRequest};
use iq_actors::imports::service::{DEFAULT_LISTED, MAX_LISTED};
use iq_actors::imports::Source;

use super::params::Params;
use crate::state::AppState;
use serde::Serialize;

use crate::http::{upload, Admin, Answer, BackOffice, HttpError};

pub async fn import(
    guard: BackOffice<Admin>,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let upload = upload::read(&req, payload, "file", &[], state.import_max_bytes).await?;
    let progress = |stage: &str| tracing::info!(stage, "import");
    let outcome = state
        .importer
        .import(
            Some(&guard.session.account),
            Source::Http,
            &upload.file_name,
            upload.bytes,
            &progress,
        )
        .await?;
    Ok(Answer(outcome))
}

/// `GET /api/v1/admin/imports?limit=&offset=`: imports newest first (100 by default).
pub async fn list(
    _: BackOffice<Admin>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let params = Params::parse(req.query_string(), &["limit", "offset"])?;
    let page = params.page(DEFAULT_LISTED, MAX_LISTED)?;
    Ok(Answer(state.importer.page(page).await?))
}

/// `GET /api/v1/admin/imports/{id}`: one import, what it changed or its problems.
pub async fn detail(
    _: BackOffice<Admin>,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.importer.detail(&id).await?))
}
