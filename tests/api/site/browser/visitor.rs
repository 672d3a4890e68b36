//! A visitor in a real browser: the public indexes' cards laid out, the footer's request
//! id, and an index's page with its chart, its facts, its quotes, its revisions and a
//! readout under the pointer.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use super::attributes;
use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{
    assert_at, click_through, js, open, revise_the_fixture, scroll_to,
};

/// A request id as the service makes them: `req_` and 32 hex digits.
fn assert_request_id(id: &str, page: &str) {
    let hex = id.strip_prefix("req_").unwrap_or_default();
    assert!(
        hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        "{page}: the footer's request id is {id:?}"
    );
}

#[actix_web::test]
async fn a_visitor_sees_the_public_indexes_and_reads_a_chart() {
    iq_test_support::require!(Browser);
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let browser = Browser::open(Viewport::Desktop).await;

    open(&browser, &app, "/", "li.card[data-index=Server_Index]").await;
    let cards = attributes(&browser, "li.card", "data-index").await;
    for code in ["Server_Index", "SSD_Index", "GPU_Index"] {
        assert!(
            cards.iter().any(|c| c == code),
            "no {code} card in {cards:?}"
        );
    }
    assert!(
        !cards.iter().any(|c| c == "Hardware_Index"),
        "a visitor sees the member index: {cards:?}"
    );
    // Every card shown, none over another.
    let layout = js(
        &browser,
        "const r = [...document.querySelectorAll('li.card')].map(c => c.getBoundingClientRect());
         const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
             && a.top < b.bottom - 1 && b.top < a.bottom - 1;
         let pairs = 0;
         for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++)
             if (overlap(r[i], r[j])) pairs++;
         return { empty: r.filter(x => x.width === 0 || x.height === 0).length, overlapping: pairs };",
    )
    .await;
    assert_eq!(layout, json!({"empty": 0, "overlapping": 0}), "the cards");
    let cutoff = browser.text_of("#cutoff").await;
    assert!(
        cutoff.contains("10 Nov 2026") && cutoff.contains("7 trading days delayed"),
        "the cutoff line: {cutoff:?}"
    );
    browser.wait_for("#login-link").await;
    let home_id = browser.text_of("#request-id").await;
    assert_request_id(&home_id, "home");
    browser.screenshot("browser_home_visitor_desktop").await;

    // Following the card's link.
    click_through(
        &browser,
        "li.card[data-index=Server_Index] h2 a",
        "#chart svg.chart",
    )
    .await;
    assert_at(&browser, "/indexes/Server_Index").await;
    let chart = browser.find("#chart svg.chart").await;
    assert!(
        chart.is_displayed().await.expect("is the chart displayed"),
        "the chart is not displayed"
    );
    let (_, _, width, height) = chart.rectangle().await.expect("the chart's box");
    assert!(
        width > 600.0 && width <= 1280.0 && height > 100.0,
        "the chart is {width}x{height} px"
    );
    // What each number is (D20): the facts box, on the page as a visitor sees it.
    let facts = browser.find("#facts").await;
    assert!(facts.is_displayed().await.unwrap(), "the facts are hidden");
    let currency = browser.text_of("#fact-currency").await;
    assert!(currency.starts_with("USD"), "{currency:?}");
    scroll_to(&browser, "facts").await;
    browser.screenshot("browser_index_facts_desktop").await;

    let quotes = browser.find("#quotes").await;
    assert!(
        quotes.is_displayed().await.unwrap(),
        "the quotes are hidden"
    );
    let mut specifications: Vec<String> = serde_json::from_value(
        js(
            &browser,
            "return [...document.querySelectorAll('#quotes td.spec')].map(td => td.innerText)",
        )
        .await,
    )
    .unwrap();
    specifications.sort();
    assert_eq!(
        specifications,
        [
            "B 8x H200 SXM 141GB",
            "b 8x H100 SXM 80GB",
            "Ä 8x B200 SXM 180GB"
        ],
        "the quotes of 10 Nov"
    );
    let daily = browser.text_of("#daily").await;
    assert!(
        daily.contains("1010.123456") && !daily.contains("999.500000"),
        "the daily values: {daily}"
    );
    let index_id = browser.text_of("#request-id").await;
    assert_request_id(&index_id, "the index page");
    assert_ne!(index_id, home_id, "two pages, one request id");

    // Hovering over the chart: a real pointer move (WebDriver moves the mouse to an
    // element's middle before clicking it), onto the mark of each day.
    assert_eq!(browser.text_of("#chart .readout").await, "");
    let marks = attributes(&browser, "#chart circle.mark", "data-date").await;
    assert_eq!(marks.len(), 2, "the chart's days: {marks:?}");
    for (date, value) in [(&marks[1], "1010.123456"), (&marks[0], "1000.000000")] {
        let mark = format!("#chart circle.mark[data-date={}]", json!(date));
        browser.click(&mark).await;
        browser.wait_for(&format!("{mark}.active")).await;
        assert_eq!(
            browser.text_of("#chart .readout").await,
            format!("{date}: {value}"),
            "the readout over {date}"
        );
        let active = js(
            &browser,
            "return document.querySelectorAll('#chart circle.mark.active').length",
        )
        .await;
        assert_eq!(active, json!(1), "one mark highlighted at a time");
    }
    assert_eq!(marks[1], "10 Nov 2026");
    browser
        .screenshot("browser_index_server_hover_desktop")
        .await;

    // A revised index's page lists its revisions (D21), each date a link to the index
    // as it stood before.
    revise_the_fixture(&app, &admin).await;
    open(&browser, &app, "/indexes/GPU_Index", "#revisions table").await;
    scroll_to(&browser, "revisions").await;
    let revision = browser.text_of("#revisions tbody tr").await;
    assert!(
        revision.contains("10 Nov 2026") && revision.contains("990.000000"),
        "{revision:?}"
    );
    browser.screenshot("browser_index_revisions_desktop").await;
    click_through(&browser, "#revisions tbody tr a", "#past").await;
    let daily = browser.text_of("#daily tbody tr").await;
    assert!(daily.contains("990.000000"), "as it stood: {daily:?}");
    browser.close().await;
}
