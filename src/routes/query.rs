//! `POST /api/v1/query`: reads the JSON body (40001 at once when it is not JSON, D1)
//! and where the key is sent (D12), holds a caller without a key to the per-minute
//! protection (D15), and passes the body, unvalidated, to the FrontActor, which
//! validates it after the key checks; a key-authenticated answer carries the
//! rate-limit headers (D6).

use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use tracing::Span;

use crate::front::{QueryOutcome, RunQuery};
use crate::http::protection::Subject;
use crate::http::request_context::QueryDataset;
use crate::http::{compress, credentials, csv_answer, envelope, json_body, rate_limit, RequestId};
use crate::state::AppState;
use iq_actors::caller::Credentials;
use iq_actors::ApiError;

pub async fn query(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let body = match json_body::read_value(&req, payload).await {
        Ok(body) => body,
        Err(error) => return envelope::failure(&request_id, &error),
    };
    let credentials = match credentials::presented(&req) {
        Ok(credentials) => credentials,
        Err(error) => return envelope::failure(&request_id, &error),
    };
    let client_ip = state.client_ip(&req);
    let keyless = match &credentials {
        Credentials::ApiKey(_) => None,
        Credentials::Session(id) => Some(Subject::Session(id)),
        Credentials::Anonymous => Some(Subject::Address(client_ip)),
    };
    if let Some(subject) = keyless {
        if let Err(refused) = state.protection.admit(&state.protection.website, subject) {
            return refused.error_response();
        }
    }
    // A catalogue name, so the label set stays bounded whatever the body says.
    let dataset = body
        .get("api_name")
        .and_then(|v| v.as_str())
        .and_then(iq_actors::catalogue::dataset)
        .map(|d| d.api_name);
    let message = RunQuery {
        request_id: request_id.shared(),
        credentials,
        client_ip,
        body,
        span: Span::current(),
    };
    let outcome = match state.front.send(message).await {
        Ok(outcome) => outcome,
        Err(error) => QueryOutcome::from(ApiError::from(error)),
    };
    let mut response = match &outcome.result {
        // CSV when asked for (D18); refusals stay envelopes.
        Ok(page) if csv_answer::wanted(&req) => {
            csv_answer::answer(page).unwrap_or_else(|error| envelope::failure(&request_id, &error))
        }
        Ok(page) => envelope::success_page(&request_id, page, compress::accepts_gzip(&req)),
        Err(error) => envelope::failure(&request_id, error),
    };
    if let Some((status, refused)) = &outcome.quota {
        rate_limit::apply(&mut response, status, *refused);
    }
    if let Some(dataset) = dataset {
        response.extensions_mut().insert(QueryDataset(dataset));
    }
    response
}
