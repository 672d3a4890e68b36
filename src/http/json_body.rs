//! Reading JSON request bodies: `Content-Type` must be JSON, the size is bounded, the
//! body must keep its pace ([`BodyPace`]), a name may not appear twice in an object
//! (D13), and any mistake is a 40001 whose message names the offending field.

use actix_web::http::header::CONTENT_TYPE;
use actix_web::{web, HttpRequest};
use futures_util::StreamExt;
use iq_actors::ApiError;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::body_pace::{self, BodyPace};
use super::strict_json;

/// A request body as actix hands it over (`web::Payload` or `dev::Payload`).
pub trait RawBody:
    futures_util::Stream<Item = Result<web::Bytes, actix_web::error::PayloadError>> + Unpin
{
}

impl<S> RawBody for S where
    S: futures_util::Stream<Item = Result<web::Bytes, actix_web::error::PayloadError>> + Unpin
{
}

/// Bodies here are a few hundred bytes; anything near this is not a request of ours.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The body as JSON, not yet checked against any shape.
pub async fn read_value(req: &HttpRequest, payload: impl RawBody) -> Result<Value, ApiError> {
    let bytes = read(req, payload).await?;
    strict_json::from_slice(&bytes).map_err(|e| match e.classify() {
        // A repeated name: the JSON is well formed, but means two things at once.
        serde_json::error::Category::Data => ApiError::invalid(format!("request body: {e}")),
        _ => ApiError::invalid(format!("request body is not valid JSON: {e}")),
    })
}

/// The body as `T`; unknown and mistyped fields are named in the error.
pub async fn parse<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: impl RawBody,
) -> Result<T, ApiError> {
    let value = read_value(req, payload).await?;
    if let Some(path) = nul_at(&value, String::new()) {
        return Err(ApiError::invalid(format!(
            "field '{path}' contains a NUL character"
        )));
    }
    // The JSON is valid by now: what is left are shape errors, named by their path.
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ApiError::invalid(format!("request body: {inner}"))
        } else {
            ApiError::invalid(format!("field '{path}': {inner}"))
        }
    })
}

/// Where a string holds a NUL character, which PostgreSQL text cannot store.
fn nul_at(value: &Value, path: String) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| nul_at(v, format!("{path}[{i}]"))),
        Value::Object(fields) => fields.iter().find_map(|(k, v)| {
            let path = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            nul_at(v, path)
        }),
        _ => None,
    }
}

/// The media type `Content-Type` names, without its parameters, as sent: media types
/// are case-insensitive, so compare it with `eq_ignore_ascii_case` (no copy is made on
/// every query).
pub fn media_type(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim)
}

/// `application/json`, or a JSON-based `application/...+json`.
fn is_json(mime: &str) -> bool {
    let mime = mime.as_bytes();
    let (prefix, suffix) = (b"application/", b"+json");
    mime.eq_ignore_ascii_case(b"application/json")
        || (mime.len() >= prefix.len() + suffix.len()
            && mime[..prefix.len()].eq_ignore_ascii_case(prefix)
            && mime[mime.len() - suffix.len()..].eq_ignore_ascii_case(suffix))
}

async fn read(req: &HttpRequest, payload: impl RawBody) -> Result<web::BytesMut, ApiError> {
    let is_json = media_type(req).is_some_and(is_json);
    if !is_json {
        return Err(ApiError::invalid(
            "header 'Content-Type' must be application/json",
        ));
    }
    read_bounded(req, payload, MAX_BODY_BYTES).await
}

/// At most `max` bytes of body, read at the request's pace ([`BodyPace`]); a larger,
/// broken or trickling body is a 40001 that says which.
pub async fn read_bounded(
    req: &HttpRequest,
    payload: impl RawBody,
    max: usize,
) -> Result<web::BytesMut, ApiError> {
    let mut payload = pace(req).wrap(payload);
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(unreadable)?;
        if body.len() + chunk.len() > max {
            return Err(ApiError::invalid(format!(
                "request body is larger than {} KiB",
                max / 1024
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The pace bodies must keep: the application's, or the default where none is set.
pub fn pace(req: &HttpRequest) -> BodyPace {
    req.app_data::<BodyPace>().copied().unwrap_or_default()
}

/// A body that broke off or arrived too slowly, as a 40001 that says which.
pub fn unreadable(error: actix_web::error::PayloadError) -> ApiError {
    match error {
        // Only the pace check ends a body with a time-out (`body_pace::Paced`).
        actix_web::error::PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            ApiError::invalid(format!(
                "{}: send it at once, not byte by byte",
                body_pace::TOO_SLOW
            ))
        }
        _ => ApiError::invalid("the request body could not be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::is_json;

    #[test]
    fn json_media_types_are_told_apart_in_any_case() {
        for mime in [
            "application/json",
            "Application/JSON",
            "application/problem+json",
        ] {
            assert!(is_json(mime), "{mime}");
        }
        for mime in [
            "text/plain",
            "application/jsonx",
            "text/+json",
            "+json",
            "application/",
        ] {
            assert!(!is_json(mime), "{mime}");
        }
    }
}
