//! HTTP routes. Handlers are thin: they read the request, check the session where the
//! back office needs one, call the domain (the FrontActor for reads of market data, the
//! back office's services held in `AppState` for the rest) and wrap the answer in the
//! envelope.

mod admin;
mod calendar;
mod config;
mod health;
mod imports;
mod keys;
mod membership;
mod metrics;
mod params;
mod query;
mod session;

use actix_web::web;

/// The service's routes; `/metrics` too unless it has its own listener.
pub fn configure(cfg: &mut web::ServiceConfig, with_metrics: bool) {
    cfg.route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz));
    if with_metrics {
        configure_metrics(cfg);
    }
    cfg.service(
        web::scope("/api/v1")
            .route("/query", web::post().to(query::query))
            .route("/openapi.json", web::get().to(crate::openapi::openapi_json))
            .route("/config", web::get().to(config::config))
            .route("/membership", web::get().to(membership::membership))
            .route("/setup", web::post().to(session::setup))
            .route("/auth/login", web::post().to(session::login))
            .route("/auth/logout", web::post().to(session::logout))
            .route("/keys", web::get().to(keys::list))
            .route("/keys", web::post().to(keys::create))
            .route("/keys/{id}", web::delete().to(keys::delete))
            .route("/keys/{id}", web::patch().to(keys::rename))
            .route("/keys/{id}/rotate", web::post().to(keys::rotate))
            .route("/keys/{id}/usage", web::get().to(keys::usage))
            .route("/admin/users", web::get().to(admin::list_users))
            .route("/admin/users", web::post().to(admin::create_user))
            .route("/admin/users/{id}", web::get().to(admin::user_detail))
            .route("/admin/users/{id}", web::patch().to(admin::patch_user))
            .route("/admin/imports", web::post().to(imports::import))
            .route("/admin/imports", web::get().to(imports::list))
            .route("/admin/imports/{id}", web::get().to(imports::detail))
            .route("/admin/tiers", web::get().to(admin::tiers))
            .route("/admin/tiers/{tier}", web::put().to(admin::replace_tier))
            .route("/admin/keys", web::get().to(admin::list_keys))
            .route("/admin/keys/{id}", web::patch().to(admin::patch_key))
            .route("/admin/keys/{id}/usage", web::get().to(admin::key_usage))
            .route("/admin/calendar", web::put().to(calendar::replace))
            .route(
                "/admin/indexes/{index_code}",
                web::patch().to(admin::patch_index),
            ),
    );
    cfg.route("/docs", web::get().to(crate::openapi::docs_page));
    crate::site::configure(cfg);
}

/// `/metrics` alone, for the listener of `METRICS_ADDR`.
pub fn configure_metrics(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(metrics::metrics_text));
}
