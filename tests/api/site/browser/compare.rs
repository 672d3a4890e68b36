//! Comparing indexes in a real browser: ticking indexes in the form draws them on one
//! chart rebased to 100, the address keeps the choice, and the table opens below.

use iq_test_support::browser::{Browser, Viewport};

use super::attributes;
use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{click_through, open, path_of};

#[actix_web::test]
async fn a_visitor_picks_indexes_and_gets_them_rebased_on_one_chart() {
    iq_test_support::require!(Browser);
    let app = spawn_with_fixture().await;
    let browser = Browser::open(Viewport::Desktop).await;
    open(&browser, &app, "/", "li.card").await;
    click_through(&browser, "nav a[href='/compare']", "#compare-form").await;
    // Exactly Server_Index and GPU_Index, over all their days.
    let script = "document.querySelectorAll('#compare-form input[name=code]').forEach(\
                  function (b) { b.checked = b.value === 'Server_Index' || b.value === 'GPU_Index'; });\
                  document.getElementById('compare-range').value = 'all';";
    browser.client().execute(script, vec![]).await.unwrap();
    click_through(&browser, "#compare-form button[type=submit]", "#legend").await;
    let url = browser.current_url().await;
    let path = path_of(&url);
    assert!(
        path.contains("code=Server_Index") && path.contains("code=GPU_Index"),
        "{path}"
    );
    let lines = attributes(&browser, "#chart polyline", "class").await;
    assert_eq!(lines, ["line s0", "line s1"]);
    browser.screenshot("browser_compare_desktop").await;
    browser.click("#compare-table-box summary").await;
    let first_row = browser.text_of("#compare-table tbody tr").await;
    assert!(
        first_row.contains("101.01") && first_row.contains("99.00"),
        "{first_row}"
    );
    browser.close().await;
}
