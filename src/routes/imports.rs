//! `POST /api/v1/admin/imports` (multipart, field `file`: a `.xlsx` workbook or a `.csv`
//! file) and `GET /api/v1/admin/imports`: quote imports for administrators (D7, D8).
//!
//! The handler only checks the session and reads the upload within the size limit;
//! validation, the transaction and the record are the domain's
//! ([`iq_actors::imports`]).

use actix_multipart::Multipart;
use actix_web::{web, HttpRequest};
use futures_util::StreamExt;
use iq_actors::imports::Source;
use iq_actors::ApiError;

use super::AppState;
use serde::Serialize;

use crate::http::{json_body, Admin, Answer, BackOffice, HttpError};

/// The latest imports listed.
const LISTED: i64 = 100;
/// The longest upload file name accepted.
const MAX_FILE_NAME_CHARS: usize = 255;

pub async fn import(
    guard: BackOffice<Admin>,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    let (file_name, bytes) = upload(&req, payload, state.import_max_bytes).await?;
    let progress = |stage: &str| tracing::info!(stage, "import");
    let outcome = state
        .importer
        .import(
            Some(&guard.session.account),
            Source::Http,
            &file_name,
            bytes,
            &progress,
        )
        .await?;
    Ok(Answer(outcome))
}

pub async fn list(
    _: BackOffice<Admin>,
    state: web::Data<AppState>,
) -> Result<Answer<impl Serialize>, HttpError> {
    Ok(Answer(state.importer.list(LISTED).await?))
}

/// The one `file` field of a multipart body: its file name and bytes, at most
/// `max_bytes` of them.
async fn upload(
    req: &HttpRequest,
    payload: web::Payload,
    max_bytes: usize,
) -> Result<(String, Vec<u8>), ApiError> {
    let not_multipart =
        || ApiError::invalid("send the file as multipart/form-data in a field named 'file'");
    let is_multipart = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
    if !is_multipart {
        return Err(not_multipart());
    }
    let mut parts = Multipart::new(req.headers(), json_body::pace(req).wrap(payload));
    let mut upload = None;
    while let Some(field) = parts.next().await {
        let mut field = field.map_err(unreadable_upload)?;
        let name = field.name().unwrap_or_default().to_string();
        if name != "file" {
            return Err(ApiError::invalid(format!(
                "unexpected form field '{name}'; send only 'file'"
            )));
        }
        if upload.is_some() {
            return Err(ApiError::invalid("send one file per import"));
        }
        let file_name = field
            .content_disposition()
            .and_then(|cd| cd.get_filename())
            .map(str::to_string)
            .ok_or_else(|| ApiError::invalid("the 'file' field has no file name"))?;
        // The name is recorded with the import: it must be text PostgreSQL can store.
        if file_name.chars().count() > MAX_FILE_NAME_CHARS || file_name.contains('\0') {
            return Err(ApiError::invalid(format!(
                "the file name must be at most {MAX_FILE_NAME_CHARS} characters, without NUL"
            )));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk.map_err(unreadable_upload)?;
            if bytes.len() + chunk.len() > max_bytes {
                return Err(ApiError::invalid(format!(
                    "the file is larger than the import limit of {} MB",
                    max_bytes / (1024 * 1024)
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        upload = Some((file_name, bytes));
    }
    upload.ok_or_else(not_multipart)
}

/// An upload that broke off, arrived too slowly or is not well-formed multipart.
fn unreadable_upload(error: actix_multipart::MultipartError) -> ApiError {
    match error {
        actix_multipart::MultipartError::Payload(payload) => json_body::unreadable(payload),
        other => ApiError::invalid(format!("unreadable upload: {other}")),
    }
}
