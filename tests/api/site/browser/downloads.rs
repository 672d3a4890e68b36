//! Downloads in a real browser: the index page's links fetch the files the browser
//! would save, a CSV of the range's daily values and a workbook, with the file name
//! that says index, range and day.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::{json, Value};

use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{open, scroll_to};

#[actix_web::test]
async fn the_index_pages_download_links_fetch_its_files() {
    iq_test_support::require!(Browser);
    let app = spawn_with_fixture().await;
    let browser = Browser::open(Viewport::Desktop).await;
    open(
        &browser,
        &app,
        "/indexes/Server_Index?range=all",
        "#downloads",
    )
    .await;
    scroll_to(&browser, "downloads").await;
    browser.screenshot("browser_downloads_desktop").await;
    // What the browser gets from each link: status, type, file name, and the CSV's text.
    let script = "return Promise.all([...document.querySelectorAll('#downloads a')]\
                  .map(a => fetch(a.href).then(r => r.blob().then(b => b.text().then(t => ({\
                     href: a.getAttribute('href'), status: r.status,\
                     type: r.headers.get('content-type'),\
                     disposition: r.headers.get('content-disposition'),\
                     text: r.headers.get('content-type').startsWith('text/csv') ? t : ''}))))));";
    let got: Value = browser.client().execute(script, vec![]).await.unwrap();
    let files = got.as_array().unwrap();
    // Daily values and quotes, each as CSV and XLSX: Server_Index is an aggregate index.
    assert_eq!(files.len(), 4, "{got}");
    for file in files {
        assert_eq!(file["status"], 200, "{file}");
        let disposition = file["disposition"].as_str().unwrap();
        assert!(
            disposition.starts_with("attachment; filename=\"Server_Index-"),
            "{file}"
        );
    }
    let daily = files
        .iter()
        .find(|f| f["href"] == json!("/indexes/Server_Index/download?range=all&format=csv"))
        .unwrap();
    let text = daily["text"].as_str().unwrap();
    assert!(text.starts_with("trade_date,index_code,"), "{text}");
    assert!(text.contains("20261110,Server_Index,1010.123456"), "{text}");
    browser.close().await;
}
