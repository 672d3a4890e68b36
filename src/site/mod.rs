//! The website (D19): public pages for visitors and members, and the member area, served
//! by the same binary outside `/api`.
//!
//! Pages read market data only through the FrontActor's [`Browse`](crate::front_actor::Browse),
//! under the website identity (the session cookie, or none), so a page never shows what
//! `POST /api/v1/query` would not return to the same caller. Everything is rendered on
//! the server (askama templates, checked at compile time and escaping by default; charts
//! as SVG); the little script there is only adds hover values and a copy button.
//!
//! This module must never read market data from the database itself, never put a
//! secret in a URL, and never answer a form that changes anything without its CSRF
//! token ([`form_token`]).

pub mod assets;
mod back_office;
mod calendar_grid;
mod chart;
mod chrome;
mod expiry;
mod form;
pub mod form_token;
mod format;
mod member;
mod path_part;
mod pre_session;
pub mod public;
mod qr_code;
mod reading;
pub mod respond;
mod session;
mod usage;
pub mod visitor_cache;

use actix_web::web;

use crate::http::refusals::PageRefusals;

/// The website's routes: everything outside `/api` but the probes and `/metrics`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    public_pages(cfg);
    sign_in_pages(cfg);
    account_pages(cfg);
    back_office::configure(cfg);
}

/// The pages anyone may read, and their files.
fn public_pages(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(public::home))
        .route("/indexes/{code}", web::get().to(public::index))
        .route("/indexes/{code}/download", web::get().to(public::download))
        .route("/compare", web::get().to(public::compare))
        .route("/docs/try/{name}", web::get().to(public::try_form))
        .route("/docs/try/{name}", web::post().to(public::try_query))
        .route("/calendar", web::get().to(public::calendar))
        .route("/methodology", web::get().to(public::methodology))
        .route("/plans", web::get().to(public::plans))
        .route("/examples", web::get().to(public::examples))
        .route("/tushare-guide", web::get().to(public::tushare_guide))
        .route(
            "/zh-CN/tushare-guide",
            web::get().to(public::tushare_guide_zh),
        )
        .route("/assets/{name}", web::get().to(public::asset_file))
        .route("/favicon.ico", web::get().to(public::favicon));
}

/// Signing in and out, a new account's set-up and a password reset.
fn sign_in_pages(cfg: &mut web::ServiceConfig) {
    cfg.route("/login", web::get().to(member::login_form))
        .route("/login", web::post().to(member::login))
        .route("/login/code", web::post().to(member::login_code))
        .route("/logout", web::post().to(member::logout))
        .route("/setup", web::get().to(member::setup_form))
        .route("/setup", web::post().to(member::setup))
        .route("/reset", web::get().to(member::reset_form))
        .route("/reset", web::post().to(member::reset));
}

/// A member's own pages: keys, webhooks, usage and security.
fn account_pages(cfg: &mut web::ServiceConfig) {
    cfg.route("/account", web::get().to(member::account))
        .route("/account/keys", web::get().to(member::keys))
        .route("/account/keys", web::post().to(member::create_key))
        .route(
            "/account/keys/{id}/delete",
            web::get().to(member::confirm_delete_key),
        )
        .route(
            "/account/keys/{id}/delete",
            web::post().to(member::delete_key),
        )
        .route(
            "/account/keys/{id}/rotate",
            web::post().to(member::rotate_key),
        )
        .route(
            "/account/keys/{id}/rename",
            web::post().to(member::rename_key),
        )
        .route("/account/webhooks", web::get().to(member::webhooks))
        .route("/account/webhooks", web::post().to(member::create_webhook))
        .route("/account/webhooks/{id}", web::get().to(member::webhook_log))
        .route(
            "/account/webhooks/{id}/test",
            web::post().to(member::test_webhook),
        )
        .route(
            "/account/webhooks/{id}/replay",
            web::post().to(member::replay_delivery),
        )
        .route(
            "/account/webhooks/{id}/rotate",
            web::post().to(member::rotate_secret),
        )
        .route(
            "/account/webhooks/{id}/recover",
            web::post().to(member::recover_deliveries),
        )
        .route(
            "/account/webhooks/{id}/delete",
            web::get().to(member::confirm_delete_webhook),
        )
        .route(
            "/account/webhooks/{id}/delete",
            web::post().to(member::delete_webhook),
        )
        .route("/account/usage", web::get().to(member::usage))
        .route("/account/security", web::get().to(member::security))
        .route("/account/password", web::post().to(member::change_password))
        .route(
            "/account/two-factor/start",
            web::post().to(member::start_two_factor),
        )
        .route(
            "/account/two-factor/confirm",
            web::post().to(member::confirm_two_factor),
        )
        .route(
            "/account/two-factor/disable",
            web::post().to(member::disable_two_factor),
        )
        .route(
            "/account/sessions/{id}/end",
            web::post().to(member::end_session),
        );
}

/// The website's answers to the refusals the framework makes (an unknown address, a
/// method a route does not take): the HTTP edge asks for them through this, registered
/// as app data at start-up, since the edge must not depend on the website.
pub const PAGE_REFUSALS: PageRefusals = PageRefusals {
    is_page,
    render: respond::framework_refusal,
};

/// Whether `path` is one of the website's (for errors the framework makes: a page
/// gets an HTML answer, an API call its envelope).
pub fn is_page(path: &str) -> bool {
    !(path.starts_with("/api/") || matches!(path, "/api" | "/healthz" | "/readyz" | "/metrics"))
}
