//! `POST /tushare` and `POST /tushare/{api_name}`: Tushare's own wire (D24), so code
//! written for Tushare Pro runs here with only its URL changed. The body's `token` is
//! the API key (none: the visitor; cookies are ignored), and the call runs through the
//! FrontActor's one check chain as `POST /api/v1/query` does: the same scopes,
//! visibility, delay, `as_of`, quotas, caches and request ids.
//!
//! Every answer is Tushare's envelope, HTTP 200 but for a 5xx, since the official SDK
//! turns any other status into an empty frame without a word.

use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::{post, web, HttpRequest, HttpResponse};

use crate::front_actor::Ask;
use crate::http::request_context::QueryDataset;
use crate::http::{compress, credentials, envelope, json_body, rate_limit, RequestId};
use crate::openapi::prelude::*;
use crate::state::AppState;

/// Call a dataset the way Tushare Pro is called
///
/// The official `tushare` package posts `{"api_name", "token", "params", "fields"}` here
/// once its URL is set to `<service>/tushare`: `index_basic`, `index_daily`,
/// `index_weekly`, `index_monthly`, `trade_cal` and `index_weight`, with Tushare's
/// column names, numbers as JSON numbers and the newest day first. `token` is an API
/// key; `fields` a comma-separated string or an array; in `params`, `null` and `""`
/// mean absent, `ts_type_name` is ignored, `limit` and `offset` page, and `ts_code`
/// names up to 8 codes in any letter case. A refusal is HTTP 200 with the service's
/// `code` and its `msg` (a 5xx keeps its status); the rate-limit headers are as on
/// `POST /api/v1/query`. See docs/api.md, "Tushare's wire".
#[utoipa::path(
    tag = "query",
    operation_id = "tushare",
    request_body(
        content = TushareRequest,
        content_type = "application/json",
        description = "Tushare's call: the dataset, the token, its params and fields."
    ),
    responses(
        (status = 200, description = "Tushare's envelope: `code` 0 and the rows, or the \
                                      service's code and `msg`.", body = TushareAnswer),
        (status = 500, response = inline(InternalError)),
    ),
    security(()),
)]
#[post("/tushare")]
pub async fn call(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(req, request_id, payload, state, None).await
}

/// Call a dataset the way Tushare Pro is called, named in the path
///
/// As `POST /tushare`, with the api_name in the path, as the official SDK sends it.
#[utoipa::path(
    tag = "query",
    operation_id = "tushare_named",
    params(("api_name" = String, Path, description = "Tushare's api_name, such as index_daily")),
    request_body(
        content = TushareRequest,
        content_type = "application/json",
        description = "Tushare's call: the token, its params and fields."
    ),
    responses(
        (status = 200, description = "Tushare's envelope: `code` 0 and the rows, or the \
                                      service's code and `msg`.", body = TushareAnswer),
        (status = 500, response = inline(InternalError)),
    ),
    security(()),
)]
#[post("/tushare/{api_name}")]
pub async fn call_named(
    req: HttpRequest,
    request_id: RequestId,
    api_name: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(req, request_id, payload, state, Some(api_name.into_inner())).await
}

async fn answer(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
    api_name: Option<String>,
) -> HttpResponse {
    let body = match json_body::read_value(&req, payload).await {
        Ok(body) => body,
        Err(error) => return envelope::tushare_failure(&request_id, &error),
    };
    let token = iq_actors::tushare::token(&body);
    let credentials = match credentials::tushare(&req, token) {
        Ok(credentials) => credentials,
        Err(error) => return envelope::tushare_failure(&request_id, &error),
    };
    let client_ip = state.client_ip(&req);
    let dataset = body
        .get("api_name")
        .and_then(|v| v.as_str())
        .or(api_name.as_deref())
        .and_then(iq_actors::catalogue::tushare_dataset)
        .map(|d| d.api_name);
    let outcome = match state
        .run_query(
            &request_id,
            credentials,
            client_ip,
            Ask::Tushare(body, api_name),
        )
        .await
    {
        Ok(outcome) => outcome,
        Err(refused) => {
            let mut response = envelope::tushare_failure(&request_id, &refused.error);
            if let Some(seconds) = refused.error.retry_after {
                response
                    .headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
            }
            return response;
        }
    };
    let mut response = match &outcome.result {
        Ok(page) => envelope::tushare_page(&request_id, page, compress::accepts_gzip(&req))
            .unwrap_or_else(|error| envelope::tushare_failure(&request_id, &error)),
        Err(error) => envelope::tushare_failure(&request_id, error),
    };
    if let Some((status, refused)) = &outcome.quota {
        rate_limit::apply(&mut response, status, *refused);
    }
    if let Some(dataset) = dataset {
        response.extensions_mut().insert(QueryDataset(dataset));
    }
    response
}
