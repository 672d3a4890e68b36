//! HTTP routes. Handlers are thin: they read the request, send one message to the
//! FrontActor and wrap the answer in the envelope.

mod config;
mod membership;
mod query;

use actix::Addr;
use actix_web::{web, HttpRequest};
use iq_actors::caller::Credentials;

use crate::front::FrontActor;

pub struct AppState {
    pub front: Addr<FrontActor>,
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            .route("/query", web::post().to(query::query))
            .route("/config", web::get().to(config::config))
            .route("/membership", web::get().to(membership::membership)),
    );
}

/// What the request presents: a present `X-API-Key` header, even empty or unreadable,
/// always means key identity (spec part 5, rule 2).
fn credentials(req: &HttpRequest) -> Credentials {
    match req.headers().get("x-api-key") {
        Some(value) => Credentials::ApiKey(value.to_str().unwrap_or_default().to_string()),
        None => Credentials::Anonymous,
    }
}
