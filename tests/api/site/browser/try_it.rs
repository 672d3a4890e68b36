//! "Try it" in a real browser: from the reference's dataset to its form, sent with the
//! button, the answer and its request id on the page that comes back.

use iq_test_support::browser::{Browser, Viewport};

use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{click_through, open, scroll_to};

#[actix_web::test]
async fn a_reader_tries_a_dataset_from_the_reference() {
    iq_test_support::require!(Browser);
    let app = spawn_with_fixture().await;
    let browser = Browser::open(Viewport::Desktop).await;
    open(&browser, &app, "/docs", "#datasets").await;
    // Its section in view first: a link at the window's edge may lie under another box.
    scroll_to(&browser, "dataset-index_latest").await;
    click_through(&browser, "a[href='/docs/try/index_latest']", "#try-form").await;
    click_through(&browser, "#try-form button[type=submit]", "#try-result").await;
    let title = browser.text_of("#try-result-title").await;
    assert_eq!(title, "Answer: HTTP 200, code 0");
    let request_id = browser.text_of("#try-request-id").await;
    assert!(request_id.starts_with("req_"), "{request_id}");
    let answer = browser.text_of("#try-answer").await;
    assert!(
        answer.contains("Server_Index") && answer.contains(&request_id),
        "{answer}"
    );
    browser.screenshot("browser_try_it_desktop").await;
    browser.close().await;
}
