//! Two-factor sign-in in a real browser: a member whose account has it logs in with the
//! password, then the authenticator's code on the second page; then again with a
//! recovery code instead. (Setting it up is checked over HTTP in the back office tests.)

use iq_actors::accounts::two_factor::code_for;
use iq_actors::clock::Clock;
use iq_test_support::browser::{Browser, Viewport};

use crate::back_office::two_factor::enrol;
use crate::helpers::{spawn_with_fixture, PASSWORD};
use crate::site::browser_steps::{
    assert_at, click_through, js, label_of, log_in_with_the_form, open,
};

/// The login form with the password, then the code page with `code`, to the account.
async fn log_in_with_code(
    browser: &Browser,
    app: &crate::helpers::TestApp,
    code: &str,
    shot: &str,
) {
    open(browser, app, "/login", "#login-form").await;
    browser.fill("#username", "tara").await;
    browser.fill("#password", PASSWORD).await;
    click_through(browser, "#login-form button[type=submit]", "#code-form").await;
    browser.fill("#code", code).await;
    browser.screenshot(shot).await;
    click_through(browser, "#code-form button[type=submit]", "#tier").await;
    assert_at(browser, "/account").await;
}

#[actix_web::test]
async fn a_member_signs_in_with_a_code_and_then_with_a_recovery_code() {
    iq_test_support::require!(Browser);
    let (app, session) = spawn_with_fixture().await.with_member("tara", "pro").await;
    let (secret, recovery) = enrol(&app, &session).await;
    let browser = Browser::open(Viewport::Desktop).await;

    let code = code_for(&secret, app.clock.now());
    log_in_with_code(&browser, &app, &code, "browser_two_factor_code_desktop").await;
    browser
        .screenshot("browser_two_factor_signed_in_desktop")
        .await;
    click_through(&browser, "form[action='/logout'] button", "main").await;

    log_in_with_code(
        &browser,
        &app,
        &recovery[3],
        "browser_two_factor_recovery_desktop",
    )
    .await;
    // The recovery code is used up: the security page counts nine left.
    open(&browser, &app, "/account/security", "#two-factor-on").await;
    let status = browser.text_of("#two-factor-on").await;
    assert!(status.contains("9 recovery code(s) left"), "{status}");
    browser.close().await;
}

#[actix_web::test]
async fn the_set_up_form_shows_a_qr_code_and_labels_its_own_password_field() {
    iq_test_support::require!(Browser);
    let (app, _) = spawn_with_fixture().await.with_member("tom", "pro").await;
    let browser = Browser::open(Viewport::Desktop).await;
    log_in_with_the_form(&browser, &app, "tom").await;
    open(&browser, &app, "/account/security", "#start-two-factor").await;
    // The change-password form and the set-up form side by side: ids stay unique
    // (click_through checks), and each password label points at its own field.
    click_through(&browser, "#start-two-factor button", "#confirm-two-factor").await;
    // The link as a QR code, drawn on the server, shown and labelled.
    let qr = browser.find("#two-factor-qr svg").await;
    assert!(qr.is_displayed().await.unwrap());
    assert_eq!(
        js(
            &browser,
            "return document.querySelector('#two-factor-qr svg').getAttribute('role')"
        )
        .await,
        serde_json::json!("img")
    );
    let size = js(
        &browser,
        "const r = document.querySelector('#two-factor-qr svg').getBoundingClientRect();
         return [Math.round(r.width), Math.round(r.height)];",
    )
    .await;
    assert_eq!(size, serde_json::json!([200, 200]), "the QR code's size");
    browser.screenshot("browser_two_factor_qr_desktop").await;
    assert_eq!(
        label_of(&browser, "two-factor-password").await,
        serde_json::json!("Password")
    );
    assert_eq!(
        label_of(&browser, "confirm-password").await,
        serde_json::json!("New password again")
    );
    browser.close().await;
}
