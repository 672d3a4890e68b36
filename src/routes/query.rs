//! `POST /api/v1/query`: reads the JSON body (40001 at once when it is not JSON, D1) and
//! passes it, unvalidated, to the FrontActor, which validates it after the key checks.

use actix_web::http::header::CONTENT_TYPE;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use iq_actors::ApiError;
use serde_json::Value;
use tracing::Span;

use super::{credentials, AppState};
use crate::front::RunQuery;
use crate::http::envelope;
use crate::http::RequestId;

/// A query body is a few hundred bytes; anything near this is not a query.
const MAX_BODY_BYTES: usize = 64 * 1024;

pub async fn query(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        let body = read_json(&req, payload).await?;
        let message = RunQuery {
            credentials: credentials(&req),
            body,
            span: Span::current(),
        };
        state.front.send(message).await?
    }
    .await;
    match result {
        Ok(page) => envelope::success(&request_id, &*page.data),
        Err(error) => envelope::failure(&request_id, &error),
    }
}

async fn read_json(req: &HttpRequest, mut payload: web::Payload) -> Result<Value, ApiError> {
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
        .unwrap_or(false);
    if !is_json {
        return Err(ApiError::invalid(
            "header 'Content-Type' must be application/json",
        ));
    }
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| ApiError::invalid("the request body could not be read"))?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::invalid(format!(
                "request body is larger than {} KiB",
                MAX_BODY_BYTES / 1024
            )));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::invalid(format!("request body is not valid JSON: {e}")))
}
