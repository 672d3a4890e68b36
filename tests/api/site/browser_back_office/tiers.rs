//! A super administrator lowers a tier's daily limit in a real browser: the field typed
//! into, the preview with its reach and changes (nothing saved yet), the saved page, and
//! a key of the tier held to the new limit on its very next query.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use super::{root_in_the_browser, to_back_office_section};
use crate::helpers::{spawn_with_fixture, Key, TestApp};
use crate::site::browser_steps::{assert_at, click_through, js, label_of};

#[actix_web::test]
async fn a_super_admin_lowers_the_free_daily_limit_and_a_free_key_feels_it_at_once() {
    iq_test_support::require!(Browser);
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let key = app.key_of_tier(&admin, "fred", "free").await;
    let free = app.tier(&admin, "free").await;
    let before = free["per_day"].as_i64().expect("the free tier's per_day");
    let lowered = 4;
    assert!(
        lowered < before,
        "the free tier allows {before} calls a day"
    );
    // The key's limit as it is now, which the service may keep in its caches.
    assert_limit(&app, &key, before, "the free key's limit before").await;

    let browser = Browser::open(Viewport::Desktop).await;
    root_in_the_browser(&browser, &app).await;
    to_back_office_section(&browser, "/admin/tiers", "#tier-free #free-per-day").await;
    let field = browser.find("#free-per-day").await;
    assert_eq!(
        field.prop("value").await.unwrap(),
        Some(before.to_string()),
        "the free tier's calls a day"
    );
    let label = label_of(&browser, "free-per-day").await;
    assert_eq!(label, json!("Calls a day (per key)"), "the field's label");
    browser.fill("#free-per-day", &lowered.to_string()).await;
    browser
        .screenshot("browser_admin_tiers_edited_desktop")
        .await;

    // The preview: what changes, for whom; nothing saved yet.
    click_through(&browser, "#tier-free button[type=submit]", "#reach").await;
    assert_eq!(browser.text_of("main h1").await, "Change the free tier");
    let reach = browser.text_of("#reach").await;
    assert!(
        reach.contains("1 active user ") && reach.contains("1 key"),
        "the preview's reach: {reach:?}"
    );
    let changes = js(
        &browser,
        "return [...document.querySelectorAll('#changes tbody tr')].map(tr =>
             [...tr.cells].map(c => c.textContent.trim()))",
    )
    .await;
    assert_eq!(
        changes,
        json!([["Calls a day", before.to_string(), lowered.to_string()]]),
        "the preview's changes"
    );
    assert_eq!(
        app.tier(&admin, "free").await["per_day"],
        json!(before),
        "a preview saved the change"
    );
    assert_eq!(
        browser.text_of("#confirm button[type=submit]").await,
        "Save these changes"
    );
    browser
        .screenshot("browser_admin_tier_preview_desktop")
        .await;

    click_through(
        &browser,
        "#confirm button[type=submit]",
        "#tier-free #free-per-day",
    )
    .await;
    assert_at(&browser, "/admin/tiers?saved=free").await;
    assert!(browser.text_of("#tier-saved").await.contains("free"));
    assert_eq!(
        browser
            .find("#free-per-day")
            .await
            .prop("value")
            .await
            .unwrap(),
        Some(lowered.to_string()),
        "the saved calls a day"
    );
    browser
        .screenshot("browser_admin_tiers_saved_desktop")
        .await;

    // The very next query with the free key runs under the new limit.
    assert_limit(&app, &key, lowered, "the free key's limit after the change").await;
    browser.close().await;
}

/// Asserts that a query with `key` is answered, under the limit `limit`
/// (`X-RateLimit-Limit`); `what` names the moment in a failure.
async fn assert_limit(app: &TestApp, key: &Key, limit: i64, what: &str) {
    let reply = app
        .query_with(json!({"api_name": "index_basic"}), Some(&key.key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.rate_limit(), limit, "{what}");
}
