//! The back office on a phone's screen: the imports and tiers pages, a refused import
//! with its error table and history, and a tier's preview, none scrolling sideways.

use iq_test_support::browser::Viewport;

use super::{root_with_a_folder, save_file, upload, BAD};
use crate::site::browser_steps::{
    assert_heading_visible, assert_no_sideways_scroll, assert_pages_fit_the_phone,
    assert_part_fits, assert_shown_page_fits, click_through, open, scroll_to,
};

#[actix_web::test]
async fn on_a_phone_the_back_office_pages_fit_the_screen_and_show_their_heading() {
    iq_test_support::require!(Browser);
    let (app, folder, browser) = root_with_a_folder(Viewport::Phone).await;

    assert_pages_fit_the_phone(
        &browser,
        &app,
        &[
            (
                "/admin/imports",
                "#import-form",
                "browser_admin_phone_imports",
            ),
            ("/admin/tiers", "#tier-free", "browser_admin_phone_tiers"),
        ],
    )
    .await;
    // The tiers' forms below the first screen: the widest part of the page.
    assert_part_fits(&browser, "tier-pro", "/admin/tiers (the pro tier)").await;
    browser.screenshot("browser_admin_phone_tiers_pro").await;

    // A refused import on the phone: its error table, and the history it leaves.
    open(&browser, &app, "/admin/imports", "#import-form").await;
    upload(&browser, &save_file(folder.path(), BAD), "#import-refused").await;
    assert_no_sideways_scroll(&browser, "the refused import's page").await;
    assert_heading_visible(&browser, "the refused import's page").await;
    scroll_to(&browser, "import-errors").await;
    browser
        .screenshot("browser_admin_phone_import_refused")
        .await;
    open(&browser, &app, "/admin/imports", "#imports tbody tr").await;
    assert_part_fits(&browser, "imports", "/admin/imports with its history").await;
    browser
        .screenshot("browser_admin_phone_imports_history")
        .await;

    // A tier's preview on the phone.
    open(&browser, &app, "/admin/tiers", "#free-per-day").await;
    browser.fill("#free-per-day", "4").await;
    click_through(&browser, "#tier-free button[type=submit]", "#reach").await;
    assert_shown_page_fits(&browser, "the tier's preview").await;
    browser.screenshot("browser_admin_phone_tier_preview").await;
    browser.close().await;
}
