//! The back office in a real browser (headless Chromium). The HTTP-level checks of the
//! same pages are in `back_office`.
//!
//! Every test saves screenshots under `target/screenshots/browser_admin_*.png` to look
//! at. A test waits for what it needs (an element, the page's `load` event, the page that
//! replaces the one shown) and never sleeps; the steps it shares with the website's
//! browser tests are in `browser_steps`.
//!
//! A file per task: `imports` (an administrator uploads a quote file through the form,
//! reads a refused file's problems and filters them, fixes the file and sees the public
//! page change), `tiers` (a super administrator changes a tier through its preview and a
//! key feels it) and `phone` (the pages on a phone). The steps they share are here:
//! logging `root` in (with a folder for the files of an import test), the bad quote
//! file, saving it and uploading it through the form.

mod imports;
mod phone;
mod tiers;

use std::path::{Path, PathBuf};

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use crate::helpers::{spawn_with_fixture, TestApp};
use crate::site::browser_steps::{assert_at, click_through, js, log_in_with_the_form};

/// The start of a test of the import pages: a service on the fixture, a browser with
/// `viewport` in which `root` is logged in, and a folder for the quote files it saves.
async fn root_with_a_folder(viewport: Viewport) -> (TestApp, tempfile::TempDir, Browser) {
    let app = spawn_with_fixture().await;
    app.admin().await;
    let folder = tempfile::tempdir().expect("a temporary folder for the quote file");
    let browser = Browser::open(viewport).await;
    root_in_the_browser(&browser, &app).await;
    (app, folder, browser)
}

/// The super administrator `root` (made through the API), logged in through the form.
async fn root_in_the_browser(browser: &Browser, app: &TestApp) {
    log_in_with_the_form(browser, app, "root").await;
    browser.wait_for("#back-office-link").await;
}

/// From any page of the signed-in administrator: to the back office by its link, then to
/// the section at `href` by the back office's own link, as a person would, waiting for
/// `ready` there.
async fn to_back_office_section(browser: &Browser, href: &str, ready: &str) {
    click_through(browser, "#back-office-link", "#back-office").await;
    let section = format!("#back-office a[href='{href}']");
    click_through(browser, &section, ready).await;
}

/// The name the quote file has on disk, and so on the import's page and in the history.
const FILE_NAME: &str = "november-quotes.csv";

/// Three bad rows (3, 5 and 6 as a spreadsheet numbers them, the header being row 1)
/// between good ones: a Saturday, an index that does not exist, a weight that is text.
const BAD: &str = "trade_date,index_code,specification,weight,price\n\
    2026-11-05,Server_Index,8x H100 SXM 80GB,1,123456.5\n\
    2026-11-07,Server_Index,8x H100 SXM 80GB,1,123500.25\n\
    2026-11-06,SSD_Index,4TB NVMe,1,310\n\
    2026-11-06,Nope_Index,8x H100 SXM 80GB,1,100\n\
    2026-11-04,Server_Index,8x H100 SXM 80GB,abc,120000\n";

/// Writes `contents` to [`FILE_NAME`] in `folder`, replacing what was there, as someone
/// saving the file again from their spreadsheet.
fn save_file(folder: &Path, contents: &str) -> PathBuf {
    let path = folder.join(FILE_NAME);
    std::fs::write(&path, contents)
        .unwrap_or_else(|err| panic!("could not write {}: {err}", path.display()));
    path
}

/// On the imports page: chooses `file` in the file input (chromedriver uploads a local
/// file whose path is typed into it), submits, and waits for the streamed page to end
/// with an element matching `outcome`.
async fn upload(browser: &Browser, file: &Path, outcome: &str) {
    browser.wait_for("#import-form").await;
    let input = browser.find("#import-file").await;
    let path = file.to_str().expect("a temporary path in UTF-8");
    input
        .send_keys(path)
        .await
        .unwrap_or_else(|err| panic!("could not choose {path} in #import-file: {err}"));
    let chosen = js(
        browser,
        "const f = document.getElementById('import-file').files;
         return f.length === 1 ? [f[0].name, f[0].size] : null;",
    )
    .await;
    let size = std::fs::metadata(file).expect("the file's size").len();
    assert_eq!(chosen, json!([FILE_NAME, size]), "the chosen file");
    click_through(browser, "#import-form button[type=submit]", outcome).await;
    assert_at(browser, "/admin/imports").await;
    let heading = browser.text_of("main h1").await;
    assert_eq!(
        heading,
        format!("Importing {FILE_NAME}"),
        "the import's page"
    );
}
