//! The browser harness works: a headless Chromium opens a page of the running service, and
//! the phone viewport is a phone's.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

#[actix_web::test]
async fn a_headless_browser_opens_a_page_of_the_service() {
    iq_test_support::require!(Browser);
    let app = iq_test_support::spawn_app().await;
    let browser = Browser::open(Viewport::Desktop).await;

    browser.goto(&format!("{}/healthz", app.address)).await;

    let source = browser.page_source().await;
    assert!(source.contains("ok"), "/healthz in the browser: {source}");
    let screenshot = browser.screenshot("smoke_healthz").await;
    assert!(
        screenshot.is_file(),
        "{} was not written",
        screenshot.display()
    );
    browser.close().await;
}

/// On a page made for phones (the viewport meta tag): the service has none yet, so a page of
/// its own. Without the tag a phone lays a page out 980 pixels wide, as Chromium does here.
#[actix_web::test]
async fn a_page_for_phones_is_390_pixels_wide_on_the_phone_viewport() {
    iq_test_support::require!(Browser);
    let browser = Browser::open(Viewport::Phone).await;

    browser
        .goto(
            "data:text/html,<meta name='viewport' content='width=device-width,initial-scale=1'>\
             <p>a phone</p>",
        )
        .await;

    let width = browser
        .client()
        .execute("return window.innerWidth", vec![])
        .await
        .expect("window.innerWidth");
    assert_eq!(width, json!(390), "window.innerWidth of a phone");
    browser.close().await;
}
