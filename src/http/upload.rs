//! Reading a `multipart/form-data` upload: one file field and a few short text fields
//! (the website's forms send their CSRF token that way), the file bounded by the
//! caller's limit, the whole body at the request's pace.

use actix_multipart::{Field, Multipart};
use actix_web::{web, HttpRequest};
use futures_util::StreamExt;
use iq_actors::ApiError;

use super::json_body;

/// The longest upload file name accepted.
const MAX_FILE_NAME_CHARS: usize = 255;
/// Text fields beside the file: a few, each short.
const MAX_TEXT_FIELDS: usize = 8;
/// Enough for a 500-character note in any script (D26) at 4 bytes a character.
const MAX_TEXT_BYTES: usize = 2048;

pub struct Upload {
    /// The file field's file name and bytes.
    pub file_name: String,
    pub bytes: Vec<u8>,
    /// The text fields, in order.
    pub fields: Vec<(String, String)>,
}

impl Upload {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The one file of field `file_field`, at most `max_bytes` of it, and the text fields
/// named in `text_fields` (any other field is refused).
pub async fn read(
    req: &HttpRequest,
    payload: web::Payload,
    file_field: &str,
    text_fields: &[&str],
    max_bytes: usize,
) -> Result<Upload, ApiError> {
    let not_multipart = || {
        ApiError::invalid(format!(
            "send the file as multipart/form-data in a field named '{file_field}'"
        ))
    };
    let is_multipart = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
    if !is_multipart {
        return Err(not_multipart());
    }
    let mut parts = Multipart::new(req.headers(), json_body::pace(req).wrap(payload));
    let mut file = None;
    let mut fields = Vec::new();
    while let Some(field) = parts.next().await {
        let mut field = field.map_err(unreadable)?;
        let name = field.name().unwrap_or_default().to_string();
        if text_fields.contains(&name.as_str()) {
            if fields.len() >= MAX_TEXT_FIELDS {
                return Err(ApiError::invalid("too many form fields"));
            }
            let value = contents(&mut field, MAX_TEXT_BYTES, || {
                ApiError::invalid(format!("form field '{name}' is too long"))
            })
            .await?;
            let value = String::from_utf8(value)
                .map_err(|_| ApiError::invalid(format!("form field '{name}' is not text")))?;
            fields.push((name, value));
            continue;
        }
        if name != file_field {
            return Err(ApiError::invalid(format!(
                "unexpected form field '{name}'; send only '{file_field}'"
            )));
        }
        if file.is_some() {
            return Err(ApiError::invalid("send one file per import"));
        }
        let file_name = file_name(&field, file_field)?;
        let bytes = contents(&mut field, max_bytes, || {
            ApiError::invalid(format!(
                "the file is larger than the import limit of {} MB",
                max_bytes / (1024 * 1024)
            ))
        })
        .await?;
        file = Some((file_name, bytes));
    }
    let (file_name, bytes) = file.ok_or_else(not_multipart)?;
    Ok(Upload {
        file_name,
        bytes,
        fields,
    })
}

/// A field's bytes, at most `max_bytes` of them (else `too_long()`).
async fn contents(
    field: &mut Field,
    max_bytes: usize,
    too_long: impl Fn() -> ApiError,
) -> Result<Vec<u8>, ApiError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(unreadable)?;
        if bytes.len() + chunk.len() > max_bytes {
            return Err(too_long());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The file's name as the upload gives it. It is recorded with the import: it must be
/// text PostgreSQL can store, and short.
fn file_name(field: &Field, file_field: &str) -> Result<String, ApiError> {
    let file_name = field
        .content_disposition()
        .and_then(|cd| cd.get_filename())
        .map(str::to_string)
        .ok_or_else(|| ApiError::invalid(format!("the '{file_field}' field has no file name")))?;
    if file_name.chars().count() > MAX_FILE_NAME_CHARS || file_name.contains('\0') {
        return Err(ApiError::invalid(format!(
            "the file name must be at most {MAX_FILE_NAME_CHARS} characters, without NUL"
        )));
    }
    Ok(file_name)
}

/// An upload that broke off, arrived too slowly or is not well-formed multipart.
fn unreadable(error: actix_multipart::MultipartError) -> ApiError {
    match error {
        actix_multipart::MultipartError::Payload(payload) => json_body::unreadable(payload),
        other => ApiError::invalid(format!("unreadable upload: {other}")),
    }
}
