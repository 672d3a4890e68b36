//! `GET/POST /api/v1/keys`, `DELETE /api/v1/keys/{id}`: a signed-in user's own API keys
//! (D7). The full key appears once, in the creation response.

use actix_web::{web, HttpRequest, HttpResponse};
use iq_actors::accounts::NewKey;
use iq_actors::caller::Role;
use serde::Serialize;

use super::AppState;
use crate::http::session::{self, Access};
use crate::http::{envelope, json_body, RequestId};

pub async fn list(
    req: HttpRequest,
    request_id: RequestId,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        let session = session::require(&req, &state, Access::Read(Role::User)).await?;
        state.accounts.list_keys(&session.account).await
    }
    .await;
    envelope::respond(&request_id, result)
}

pub async fn create(
    req: HttpRequest,
    request_id: RequestId,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let result = async {
        let session = session::require(&req, &state, Access::Write(Role::User)).await?;
        let new: NewKey = json_body::parse(&req, payload).await?;
        state.accounts.create_key(&session.account, new).await
    }
    .await;
    envelope::respond(&request_id, result)
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
    let result = async {
        let session = session::require(&req, &state, Access::Write(Role::User)).await?;
        state.accounts.delete_key(&session.account, &id).await?;
        Ok(Deleted {
            deleted: id.into_inner(),
        })
    }
    .await;
    envelope::respond(&request_id, result)
}
