//! `POST /api/v1/query`: reads the JSON body (40001 at once when it is not JSON, D1) and
//! passes it, unvalidated, to the FrontActor, which validates it after the key checks.

use actix_web::{web, HttpRequest, HttpResponse};
use tracing::Span;

use super::{credentials, AppState};
use crate::front::RunQuery;
use crate::http::{envelope, json_body, RequestId};

pub async fn query(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        let body = json_body::read_value(&req, payload).await?;
        let message = RunQuery {
            credentials: credentials(&req),
            client_ip: state.client_ip(&req),
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
