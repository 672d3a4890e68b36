//! `GET/POST /api/v1/keys`, `DELETE /api/v1/keys/{id}`: a signed-in user's own API keys
//! (D7). The full key appears once, in the creation response.

use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::accounts::NewKey;
use iq_actors::caller::Role;
use serde::Serialize;

use super::AppState;
use crate::http::session::{answer, Access};
use crate::http::{envelope, RequestId};

pub async fn list(
    req: HttpRequest,
    request_id: RequestId,
    state: web::Data<AppState>,
) -> HttpResponse {
    answer(
        &req,
        &request_id,
        &state,
        Access::Read(Role::User),
        None,
        async |session, ()| state.accounts.list_keys(&session.account).await,
    )
    .await
}

pub async fn create(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let access = Access::Write(Role::User);
    let response = answer(
        &req,
        &request_id,
        &state,
        access,
        Some(payload),
        async |session, new: NewKey| state.accounts.create_key(&session.account, new).await,
    )
    .await;
    // The new key is in the body, once.
    envelope::no_store(response)
}

#[derive(Serialize)]
struct Deleted {
    deleted: String,
}

pub async fn delete(
    req: HttpRequest,
    request_id: RequestId,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let access = Access::Write(Role::User);
    answer(
        &req,
        &request_id,
        &state,
        access,
        None,
        async |session, ()| {
            state.accounts.delete_key(&session.account, &id).await?;
            Ok(Deleted {
                deleted: id.to_string(),
            })
        },
    )
    .await
}
