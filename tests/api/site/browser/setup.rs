//! The first start in a real browser: a fresh service (the binary, as an operator runs
//! it) prints a one-time set-up link with its start-up lines; opened in the browser, its
//! form creates the super administrator and signs them in to the back office. Once set
//! up, the link is dead and a restart prints none.

use iq_test_support::browser::{Browser, Viewport};

use crate::child::{database_name, drop_database, Service};
use crate::helpers::{count_rows, create_database, select_pairs, TestApp, PASSWORD};
use crate::site::browser_steps::{click_through, loaded};

const ENV: &[(&str, &str)] = &[("RUST_LOG", "info")];

/// The set-up link's path (`/setup?token=...`) in a start's standard output, if any.
fn link_in(stdout: &str) -> Option<String> {
    let at = stdout.find("/setup?token=")?;
    let end = stdout[at..]
        .find(char::is_whitespace)
        .map_or(stdout.len(), |n| at + n);
    Some(stdout[at..end].to_owned())
}

#[actix_web::test]
async fn the_first_start_prints_a_set_up_link_that_creates_the_super_administrator() {
    iq_test_support::require!(Browser);
    let database_url = create_database().await;

    // The first start prints the link on standard output, never in the JSON log.
    let mut first = Service::start(&database_url, ENV).await;
    let output = first.stop();
    let link = link_in(&output.stdout).unwrap_or_else(|| panic!("no link in:\n{}", output.stdout));
    let token = link.split_once("token=").unwrap().1.to_owned();
    assert!(!output.stderr.contains(&token), "the token is in the log");

    let mut second = Service::start(&database_url, ENV).await;
    let browser = Browser::open(Viewport::Desktop).await;
    browser.goto(&format!("{}{link}", second.base)).await;
    browser.wait_for("#setup-form").await;
    loaded(&browser).await;
    browser.fill("#setup-username", "chief").await;
    browser.fill("#setup-password", PASSWORD).await;
    browser.fill("#setup-confirm", PASSWORD).await;
    browser.screenshot("browser_setup_form_desktop").await;
    click_through(&browser, "#setup-form button[type=submit]", "#back-office").await;
    assert!(browser.current_url().await.ends_with("/admin"));
    browser.screenshot("browser_setup_done_desktop").await;

    // The super administrator exists, with its audit record; the link is dead.
    let app = TestApp::attach(&second.base, &database_url).await;
    let roles: Vec<(String, String)> =
        select_pairs(&app.db, "SELECT username, role FROM users").await;
    assert_eq!(roles, [("chief".to_owned(), "super_admin".to_owned())]);
    assert_eq!(count_rows(&app.db, "setup_tokens").await, 0);
    let dead = app.page(&link).await;
    assert_eq!(dead.status, 400);
    dead.assert_has(r#"id="setup-problem""#);
    browser.close().await;
    second.stop();

    // A start after the set-up prints no link.
    let mut third = Service::start(&database_url, ENV).await;
    let output = third.stop();
    assert_eq!(link_in(&output.stdout), None, "{}", output.stdout);
    drop_database(&database_name(&database_url)).await;
}
