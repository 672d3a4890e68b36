//! The back office's pages over plain HTTP; the real-browser tests of the same pages are
//! in `browser_back_office`. A file per topic, each form checked with its CSRF token:
//! `access` (a login form for nobody, a 403 page for a role too low), `imports` (the
//! import form, every bad row, an import's record and its problems as CSV), `settings`
//! (tiers with a preview, indexes, the calendar), `users` (found, created, changed, their
//! roles) and `keys` (every key for administrators, and an owner's own keys page).
//!
//! The steps they share are here: [`root`], the super administrator signed in through
//! the form, and [`back_office`], an instance with its super administrator both ways.

mod access;
mod audit;
mod imports;
mod keys;
mod settings;
mod users;

use iq_test_support::site::SignedIn;

use crate::helpers::{spawn_with_fixture, Session, TestApp, PASSWORD};

/// The super administrator `root`, signed in through the form.
async fn root(app: &TestApp) -> SignedIn {
    app.admin().await;
    app.form_login("root", PASSWORD).await
}

/// An instance on the fixture with its super administrator both ways: the API session
/// that sets a test up, and [`root`], signed in through the form, that uses the pages.
async fn back_office() -> (TestApp, Session, SignedIn) {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let root = root(&app).await;
    (app, admin, root)
}
