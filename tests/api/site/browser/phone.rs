//! The website on a phone's screen: every page, a key's pages included, laid out for the
//! phone, never scrolling sideways, its main heading in the first screen.

use iq_test_support::browser::{Browser, Viewport};

use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{
    assert_no_sideways_scroll, assert_pages_fit_the_phone, assert_part_fits,
    assert_shown_page_fits, click_through, log_in_with_the_form, open, revise_the_fixture,
    scroll_to,
};

#[actix_web::test]
async fn on_a_phone_pages_fit_the_screen_and_show_their_heading() {
    iq_test_support::require!(Browser);
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    app.user(&admin, "pat", "pro").await;
    let browser = Browser::open(Viewport::Phone).await;

    assert_pages_fit_the_phone(
        &browser,
        &app,
        &[
            ("/", "li.card", "browser_phone_home"),
            (
                "/indexes/Server_Index",
                "#chart svg.chart",
                "browser_phone_index",
            ),
            ("/login", "#login-form", "browser_phone_login"),
            (
                "/compare?code=Server_Index&code=GPU_Index&range=all",
                "#chart svg.chart",
                "browser_phone_compare",
            ),
            ("/docs", "#datasets", "browser_phone_docs"),
            ("/docs/admin", "#tag-admin", "browser_phone_docs_admin"),
            ("/docs/try/index_daily", "#try-form", "browser_phone_try_it"),
            (
                "/tushare-guide",
                "#guide-sdk",
                "browser_phone_tushare_guide",
            ),
            (
                "/zh-CN/tushare-guide",
                "#guide-sdk",
                "browser_phone_tushare_guide_zh",
            ),
        ],
    )
    .await;
    // The facts box: one column on a phone, nothing wider than the screen.
    open(&browser, &app, "/indexes/Server_Index", "#facts").await;
    scroll_to(&browser, "facts").await;
    assert_no_sideways_scroll(&browser, "/indexes/Server_Index (facts)").await;
    let next = browser.text_of("#fact-next").await;
    assert!(next.contains("18:00"), "{next:?}");
    browser.screenshot("browser_phone_index_facts").await;
    // The revisions table scrolls within its box, never the page.
    revise_the_fixture(&app, &admin).await;
    open(&browser, &app, "/indexes/GPU_Index", "#revisions table").await;
    assert_part_fits(&browser, "revisions", "/indexes/GPU_Index (revisions)").await;
    browser.screenshot("browser_phone_index_revisions").await;
    // The lower part of the index page: its tables are the widest things on it.
    open(&browser, &app, "/indexes/Server_Index", "#quotes").await;
    assert_part_fits(&browser, "quotes", "/indexes/Server_Index (tables)").await;
    browser.screenshot("browser_phone_index_tables").await;
    // The guide's names table scrolls within its box, in either language.
    for path in ["/tushare-guide", "/zh-CN/tushare-guide"] {
        open(&browser, &app, path, "#guide-names").await;
        assert_part_fits(&browser, "guide-names", path).await;
    }
    browser
        .screenshot("browser_phone_tushare_guide_names")
        .await;

    log_in_with_the_form(&browser, &app, "pat").await;
    assert_shown_page_fits(&browser, "/account").await;
    browser.screenshot("browser_phone_account").await;

    open(&browser, &app, "/account/keys", "#create-key").await;
    assert_shown_page_fits(&browser, "/account/keys").await;
    browser.screenshot("browser_phone_keys_empty").await;

    // A key made on the phone: its page, with the long key, and the list with its row.
    browser.fill("#key-name", "phone").await;
    click_through(&browser, "#create-key button[type=submit]", "#new-key").await;
    assert_shown_page_fits(&browser, "the new key's page").await;
    browser.screenshot("browser_phone_key_created").await;

    open(&browser, &app, "/account/keys", "tr[data-key-id]").await;
    assert_shown_page_fits(&browser, "/account/keys with a key").await;
    browser.screenshot("browser_phone_keys").await;

    // A webhook's pages: the list with its form, the secret, the delivery log.
    open(&browser, &app, "/account/webhooks", "#add-webhook").await;
    assert_no_sideways_scroll(&browser, "/account/webhooks").await;
    browser
        .fill(
            "#webhook-url",
            "https://hooks.example.com/a/rather/long/path/for/a/phone",
        )
        .await;
    click_through(&browser, "#add-webhook button[type=submit]", "#new-secret").await;
    assert_shown_page_fits(&browser, "the new webhook's page").await;
    browser.screenshot("browser_phone_webhook_created").await;
    open(&browser, &app, "/account/webhooks", "tr[data-webhook-id]").await;
    assert_no_sideways_scroll(&browser, "/account/webhooks with one").await;
    browser.screenshot("browser_phone_webhooks").await;
    browser.close().await;
}
