//! An administrator imports quotes through the form in a real browser: a refused file's
//! rows read and filtered by column, the fixed file accepted, the public index page
//! showing the new values at once, and the history newest first.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use super::{root_with_a_folder, save_file, to_back_office_section, upload, BAD, FILE_NAME};
use crate::site::browser_steps::{assert_at, click_through, js, label_of, open, scroll_to};

/// [`BAD`] with its three rows put right: a Friday, GPU_Index, a weight of 1.
const FIXED: &str = "trade_date,index_code,specification,weight,price\n\
    2026-11-05,Server_Index,8x H100 SXM 80GB,1,123456.5\n\
    2026-11-06,Server_Index,8x H100 SXM 80GB,1,123500.25\n\
    2026-11-06,SSD_Index,4TB NVMe,1,310\n\
    2026-11-06,GPU_Index,H100 SXM5 80GB,1,29650\n\
    2026-11-04,Server_Index,8x H100 SXM 80GB,1,120000\n";

/// The rows of the error table: (data-column, row number, column, problem, displayed).
async fn error_rows(browser: &Browser) -> Vec<(String, String, String, String, bool)> {
    let cells = js(
        browser,
        "return [...document.querySelectorAll('#import-errors tbody tr')].map(tr =>
             [tr.getAttribute('data-column'), ...[...tr.cells].map(td => td.textContent.trim())])",
    )
    .await;
    let cells: Vec<Vec<String>> = serde_json::from_value(cells).expect("rows of strings");
    let mut rows = Vec::new();
    for (i, cells) in cells.into_iter().enumerate() {
        assert_eq!(
            cells.len(),
            4,
            "row {} of the error table: {cells:?}",
            i + 1
        );
        // WebDriver's own idea of what is shown, not the `hidden` attribute.
        let displayed = browser
            .find(&format!("#import-errors tbody tr:nth-child({})", i + 1))
            .await
            .is_displayed()
            .await
            .expect("is the row displayed");
        let [column, row, named, reason]: [String; 4] = cells.try_into().unwrap();
        rows.push((column, row, named, reason, displayed));
    }
    rows
}

/// The daily table of the index page shown: weighted price by `YYYYMMDD` date.
async fn weighted_prices(browser: &Browser) -> Vec<(String, String)> {
    let heads = js(
        browser,
        "return [...document.querySelectorAll('#daily thead th')].map(th => th.textContent.trim())",
    )
    .await;
    assert_eq!(
        heads.get(2),
        Some(&json!("Weighted price")),
        "the daily table's columns: {heads}"
    );
    let rows = js(
        browser,
        "return [...document.querySelectorAll('#daily tbody tr')].map(tr =>
             [tr.querySelector('code.wire').textContent.trim(), tr.cells[2].textContent.trim()])",
    )
    .await;
    serde_json::from_value(rows).expect("pairs of strings")
}

#[actix_web::test]
async fn an_admin_reads_and_filters_a_refused_files_rows_then_imports_the_fixed_file() {
    iq_test_support::require!(Browser);
    let (app, folder, browser) = root_with_a_folder(Viewport::Desktop).await;

    // To the imports by the links a person follows.
    to_back_office_section(&browser, "/admin/imports", "#import-form").await;
    assert!(
        browser.text_of("main").await.contains("No imports yet."),
        "a fresh service's history"
    );
    let label = label_of(&browser, "import-file").await;
    assert_eq!(label, json!("Quote file"), "the file input's label");
    browser
        .screenshot("browser_admin_imports_empty_desktop")
        .await;

    // The bad file: refused, with its three rows and nothing else.
    let file = save_file(folder.path(), BAD);
    upload(&browser, &file, "#import-refused").await;
    let stages = browser.text_of("#progress .stages").await;
    assert!(
        stages.contains(&format!("reading {FILE_NAME}")),
        "the import's progress: {stages:?}"
    );
    assert!(
        browser
            .find("#import-refused")
            .await
            .is_displayed()
            .await
            .unwrap(),
        "the refusal is not shown"
    );
    let rows = error_rows(&browser).await;
    let numbered: Vec<(&str, &str, &str, bool)> = rows
        .iter()
        .map(|(column, row, named, _, shown)| {
            (column.as_str(), row.as_str(), named.as_str(), *shown)
        })
        .collect();
    assert_eq!(
        numbered,
        [
            ("trade_date", "3", "trade_date", true),
            ("index_code", "5", "index_code", true),
            ("weight", "6", "weight", true),
        ],
        "the error table: {rows:?}"
    );
    for (row, quoted) in [(0, "2026-11-07"), (1, "Nope_Index"), (2, "abc")] {
        assert!(
            rows[row].3.contains(quoted),
            "the problem of row {} does not quote {quoted:?}: {:?}",
            rows[row].1,
            rows[row].3
        );
    }
    browser
        .screenshot("browser_admin_import_refused_desktop")
        .await;

    // The script shows the column filter (hidden without it) and filters by column.
    let filter = browser.find("#error-column").await;
    assert!(
        filter.is_displayed().await.unwrap(),
        "the script did not show the column filter"
    );
    let options = js(
        &browser,
        "return [...document.querySelectorAll('#error-column option')].map(o => o.value)",
    )
    .await;
    assert_eq!(
        options,
        json!(["", "index_code", "trade_date", "weight"]),
        "the filter's choices"
    );
    assert_eq!(
        label_of(&browser, "error-column").await,
        json!("Show column"),
        "the filter's label"
    );
    filter
        .select_by_value("index_code")
        .await
        .expect("choosing index_code in the filter");
    let shown: Vec<(String, bool)> = error_rows(&browser)
        .await
        .into_iter()
        .map(|(column, _, _, _, shown)| (column, shown))
        .collect();
    assert_eq!(
        shown,
        [
            ("trade_date".to_owned(), false),
            ("index_code".to_owned(), true),
            ("weight".to_owned(), false),
        ],
        "rows shown with the filter on index_code"
    );
    browser
        .screenshot("browser_admin_import_refused_filtered_desktop")
        .await;
    filter
        .select_by_value("")
        .await
        .expect("choosing all in the filter");
    let shown = error_rows(&browser).await;
    assert!(
        shown.iter().all(|row| row.4),
        "rows hidden with the filter back on all: {shown:?}"
    );
    // Nothing of the refused file reached the public page.
    app.page("/indexes/Server_Index")
        .await
        .assert_lacks("123456.500000");

    // Back to the form, where the history lists the refused attempt.
    click_through(
        &browser,
        "main a[href='/admin/imports']",
        "#imports tbody tr",
    )
    .await;
    let history = browser.text_of("#imports tbody").await;
    assert!(
        history.contains(FILE_NAME) && history.contains("rejected (3 problems)"),
        "the history after the refusal: {history:?}"
    );

    // The fixed file, saved over the bad one: accepted.
    let file = save_file(folder.path(), FIXED);
    upload(&browser, &file, "#import-accepted").await;
    let summary = browser.text_of("#outcome p").await;
    assert!(
        summary.starts_with("5 quotes stored"),
        "the accepted import's summary: {summary:?}"
    );
    let changed = js(
        &browser,
        "return [...document.querySelectorAll('#changed tbody tr')].map(tr =>
             [tr.cells[0].textContent.trim(), tr.cells[1].textContent.trim()])",
    )
    .await;
    let changed: Vec<(String, String)> = serde_json::from_value(changed).unwrap();
    for (code, from) in [
        ("Server_Index", "20261104"),
        ("SSD_Index", "20261106"),
        ("GPU_Index", "20261106"),
    ] {
        assert!(
            changed.iter().any(|(c, f)| c == code && f.ends_with(from)),
            "{code} recalculated from {from} is not in {changed:?}"
        );
    }
    browser
        .screenshot("browser_admin_import_accepted_desktop")
        .await;

    // The index's link leads to its public page, which shows the new values at once.
    click_through(
        &browser,
        "#changed a[href='/indexes/Server_Index']",
        "#daily tbody tr",
    )
    .await;
    assert_at(&browser, "/indexes/Server_Index").await;
    let prices = weighted_prices(&browser).await;
    for (date, price) in [
        ("20261104", "120000.000000"),
        ("20261105", "123456.500000"),
        ("20261106", "123500.250000"),
    ] {
        assert!(
            prices.iter().any(|(d, p)| d == date && p == price),
            "no weighted price {price} on {date} in {prices:?}"
        );
    }
    scroll_to(&browser, "daily").await;
    browser
        .screenshot("browser_admin_import_index_page_desktop")
        .await;
    // And so does a visitor's (delayed up to 10 Nov).
    app.page("/indexes/Server_Index")
        .await
        .assert_has("123456.500000");

    // The history, newest first.
    open(&browser, &app, "/admin/imports", "#imports tbody tr").await;
    let results: Vec<String> = serde_json::from_value(
        js(
            &browser,
            "return [...document.querySelectorAll('#imports tbody tr')].map(tr => tr.className)",
        )
        .await,
    )
    .unwrap();
    assert_eq!(results, ["accepted", "rejected"], "the history's results");
    browser
        .screenshot("browser_admin_imports_history_desktop")
        .await;
    browser.close().await;
}
