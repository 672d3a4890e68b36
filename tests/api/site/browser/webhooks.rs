//! A member's webhooks in a real browser: adding one (the secret shown once, with its
//! copy button), sending it a test message that arrives signed, reading the delivery
//! log, rotating its secret and recovering its failed deliveries from the log's forms,
//! and deleting it after the page that asks.

use std::time::Duration;

use iq_test_support::browser::{Browser, Viewport};

use super::attributes;
use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{assert_at, click_through, log_in_with_the_form, open};
use crate::webhooks::receiver::Receiver;

#[actix_web::test]
async fn a_member_adds_tests_reads_and_deletes_a_webhook() {
    iq_test_support::require!(Browser);
    let (app, _) = spawn_with_fixture().await.with_member("wes", "pro").await;
    let receiver = Receiver::start();
    let browser = Browser::open(Viewport::Desktop).await;

    log_in_with_the_form(&browser, &app, "wes").await;
    click_through(&browser, "#account-link", "#tier").await;
    click_through(
        &browser,
        ".subnav a[href='/account/webhooks']",
        "#add-webhook",
    )
    .await;
    browser.fill("#webhook-url", &receiver.url).await;
    click_through(&browser, "#add-webhook button[type=submit]", "#new-secret").await;
    let secret = browser.text_of("#new-secret").await;
    assert!(secret.starts_with("whsec_"), "the secret: {secret:?}");
    assert!(browser
        .find("button.copy[data-copy=new-secret]")
        .await
        .is_displayed()
        .await
        .unwrap());
    browser.screenshot("browser_webhook_created_desktop").await;

    // The test message, from the page that showed the secret.
    click_through(&browser, "main form button[type=submit]", "#webhook-queued").await;
    let received = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(received[0].json()["type"], "webhook.test");
    assert!(received[0].id.starts_with("test_"), "{:?}", received[0]);

    // The log shows the attempt (the page is read again until it has arrived).
    let logged = crate::helpers::eventually(Duration::from_secs(10), || async {
        browser.client().refresh().await.expect("reload the page");
        !attributes(&browser, "tr[data-delivery-id]", "data-delivery-id")
            .await
            .is_empty()
    })
    .await;
    assert!(logged, "the delivery log lists the attempt");
    let row = browser.text_of("#deliveries tbody tr").await;
    assert!(
        row.contains("webhook.test") && row.contains("204"),
        "the attempt: {row}"
    );
    browser.screenshot("browser_webhook_log_desktop").await;

    // Rotating shows the new secret once and says how long the old one still signs.
    let log = browser.current_url().await;
    click_through(&browser, "#rotate-secret", "#rotation-overlap").await;
    let rotated = browser.text_of("#new-secret").await;
    assert!(
        rotated.starts_with("whsec_") && rotated != secret,
        "{rotated}"
    );
    assert!(browser
        .text_of("#rotation-overlap")
        .await
        .contains("two signatures"));
    browser.goto(&log).await;
    browser.wait_for("#recover-form").await;
    // Recovering since a day ago (the form's own value): nothing failed, nothing resent.
    click_through(
        &browser,
        "#recover-form button[type=submit]",
        "#webhook-recovered",
    )
    .await;
    assert!(
        browser
            .text_of("#webhook-recovered")
            .await
            .starts_with("0 deliveries"),
        "{}",
        browser.text_of("#webhook-recovered").await
    );

    // Never shown again; deleting asks first.
    open(&browser, &app, "/account/webhooks", "tr[data-webhook-id]").await;
    assert!(
        !browser.page_source().await.contains(&secret),
        "the secret is shown again"
    );
    click_through(&browser, "a.danger[href$='/delete']", "#confirm-delete").await;
    click_through(&browser, "#confirm-delete button", "#webhook-deleted").await;
    assert_at(&browser, "/account/webhooks?deleted=1").await;
    assert!(
        attributes(&browser, "tr[data-webhook-id]", "data-webhook-id")
            .await
            .is_empty()
    );
}
