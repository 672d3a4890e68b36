//! HTTP routes. Handlers are thin: they read the request, check the session where the
//! back office needs one, call the domain (the FrontActor for reads of market data, the
//! back office's services held in `AppState` for the rest) and wrap the answer in the
//! envelope.

mod admin;
mod calendar;
mod config;
mod events;
mod health;
mod imports;
mod keys;
mod membership;
mod metrics;
mod params;
mod query;
mod reference;
mod session;
mod tushare;
mod webhooks;

use actix_web::web;
use utoipa_actix_web::scope;
use utoipa_actix_web::service_config::ServiceConfig;

pub use reference::{document, json, pretty_json};

/// The service's routes, each a described handler (`service` takes nothing else), so
/// the OpenAPI document is exactly what is mounted; `/metrics` too unless it has its
/// own listener. The website's pages are mounted last, outside the document.
pub fn configure(cfg: &mut ServiceConfig, with_metrics: bool) {
    cfg.service(
        scope("/api/v1")
            .service(query::query)
            .service(config::config)
            .service(membership::membership)
            .service(events::events)
            .service(session::setup)
            .service(session::login)
            .service(session::logout)
            .service(session::change_password)
            .service(session::sessions)
            .service(session::end_session)
            .service(keys::list)
            .service(keys::create)
            .service(keys::delete)
            .service(keys::rename)
            .service(keys::rotate)
            .service(keys::usage)
            .service(webhooks::list)
            .service(webhooks::create)
            .service(webhooks::delete)
            .service(webhooks::test)
            .service(webhooks::deliveries)
            .service(webhooks::replay)
            .service(webhooks::rotate_secret)
            .service(webhooks::recover)
            .service(webhooks::admin_list)
            .service(admin::list_users)
            .service(admin::create_user)
            .service(admin::user_detail)
            .service(admin::patch_user)
            .service(admin::issue_password_reset)
            .service(admin::tiers)
            .service(admin::replace_tier)
            .service(admin::list_keys)
            .service(admin::patch_key)
            .service(admin::key_usage)
            .service(calendar::replace)
            .service(admin::patch_index)
            .service(admin::audit)
            .service(imports::import)
            .service(imports::list)
            .service(imports::detail)
            .service(reference::openapi_json),
    );
    cfg.service(tushare::call).service(tushare::call_named);
    cfg.service(health::healthz).service(health::readyz);
    if with_metrics {
        configure_metrics(cfg);
    }
    cfg.service(reference::docs)
        .service(reference::docs_section);
    cfg.map(|cfg| {
        crate::site::configure(cfg);
        cfg
    });
}

/// `/metrics` alone, for the listener of `METRICS_ADDR`.
fn configure_metrics(cfg: &mut ServiceConfig) {
    cfg.service(metrics::metrics_text);
}

/// Mounts [`configure`]'s routes on an actix-web app (the description it collects is
/// [`document`]'s, made once).
pub fn mount(cfg: &mut web::ServiceConfig, with_metrics: bool) {
    configure(&mut ServiceConfig::new(cfg), with_metrics);
}

/// Mounts `/metrics` alone.
pub fn mount_metrics(cfg: &mut web::ServiceConfig) {
    configure_metrics(&mut ServiceConfig::new(cfg));
}
