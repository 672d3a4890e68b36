//! The steps the real-browser tests (`browser` and `browser_back_office`) share: running
//! a script in the page, opening a page, telling the page a click led to from the one it
//! left, logging in through the form, the layout checks every page must pass on a
//! phone, and a revision of the fixture's data for the pages that list revisions.
//!
//! They wait for what a test needs (an element, the page's `load` event, the page that
//! replaces the one shown) and never sleep.

use iq_test_support::browser::Browser;
use serde_json::{json, Value};

use crate::helpers::quotes::import;
use crate::helpers::{Session, TestApp, PASSWORD};

/// Runs `script` in the page and returns what it returns.
pub(super) async fn js(browser: &Browser, script: &str) -> Value {
    browser
        .client()
        .execute(script, vec![])
        .await
        .unwrap_or_else(|err| panic!("the script {script:?} failed: {err}"))
}

/// The text of the first label of the form field with id `id`, trimmed (`null` when it
/// has none): what a screen reader announces for it.
pub(super) async fn label_of(browser: &Browser, id: &str) -> Value {
    let script = format!(
        "const field = document.getElementById('{id}');
         return field.labels.length ? field.labels[0].textContent.trim() : null"
    );
    js(browser, &script).await
}

/// Scrolls the element with id `id` into view (for a screenshot of it, or a layout check
/// of the part of the page it is in).
pub(super) async fn scroll_to(browser: &Browser, id: &str) {
    js(
        browser,
        &format!("document.getElementById({}).scrollIntoView()", json!(id)),
    )
    .await;
}

/// Waits for the current page's `load` event, after which its deferred script has run
/// (and, for a streamed page such as an import's, after its last chunk arrived).
pub(super) async fn loaded(browser: &Browser) {
    let script = "const done = arguments[arguments.length - 1];
        if (document.readyState === 'complete') { done(true); }
        else { window.addEventListener('load', () => done(true), { once: true }); }";
    browser
        .client()
        .execute_async(script, vec![])
        .await
        .unwrap_or_else(|err| panic!("the page never finished loading: {err}"));
}

/// Marks the page shown now, so that [`next_page`] can tell the page that replaces it.
pub(super) async fn mark_page(browser: &Browser) {
    js(
        browser,
        "document.documentElement.setAttribute('data-left', '')",
    )
    .await;
}

/// Waits for a page other than the one [`mark_page`] marked, with an element matching
/// `css`, to be shown and loaded; its ids are unique.
pub(super) async fn next_page(browser: &Browser, css: &str) {
    browser
        .wait_for(&format!("html:not([data-left]) {css}"))
        .await;
    loaded(browser).await;
    assert_unique_ids(browser).await;
}

/// Asserts that no two elements of the page shown share an id: a link to one, a
/// label's `for` or a copy button's `data-copy` would find the wrong one. Every page a
/// browser test reaches through [`open`] or [`click_through`] is checked.
pub(super) async fn assert_unique_ids(browser: &Browser) {
    let repeated = js(
        browser,
        "const seen = new Set(), twice = new Set();
         document.querySelectorAll('[id]').forEach(e => {
             if (seen.has(e.id)) twice.add(e.id);
             seen.add(e.id);
         });
         return [...twice];",
    )
    .await;
    let page = browser.current_url().await;
    assert_eq!(
        repeated,
        serde_json::json!([]),
        "{page}: ids used more than once"
    );
}

/// Clicks the element matching `target` and waits for the page it leads to, with an
/// element matching `css`.
pub(super) async fn click_through(browser: &Browser, target: &str, css: &str) {
    mark_page(browser).await;
    browser.click(target).await;
    next_page(browser, css).await;
}

/// Opens `path` and waits for it to be loaded with an element matching `css`.
pub(super) async fn open(browser: &Browser, app: &TestApp, path: &str, css: &str) {
    browser.goto(&format!("{}{path}", app.address)).await;
    browser.wait_for(css).await;
    loaded(browser).await;
    assert_unique_ids(browser).await;
}

/// Asserts the browser shows the page at `path` (with its query, if any).
pub(super) async fn assert_at(browser: &Browser, path: &str) {
    assert_eq!(path_of(&browser.current_url().await), path);
}

/// What follows the host in `url`: its path, with any query and fragment (`/` when
/// there is none).
pub(super) fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.find('/').map_or("/", |at| &rest[at..])
}

/// Asserts the page is no wider than the window (nothing scrolls it sideways), naming the
/// elements that stick out when it is.
pub(super) async fn assert_no_sideways_scroll(browser: &Browser, page: &str) {
    let measured = js(
        browser,
        "const width = window.innerWidth;
         const clipped = e => { for (let a = e.parentElement; a; a = a.parentElement) {
             if (getComputedStyle(a).overflowX !== 'visible') return true; } return false; };
         const out = [...document.body.querySelectorAll('*')]
             .filter(e => e.getBoundingClientRect().right > width + 0.5 && !clipped(e))
             .slice(0, 8)
             .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                 + (e.className && typeof e.className === 'string' ? '.' + e.className : '')
                 + ' right=' + Math.round(e.getBoundingClientRect().right));
         return { scroll: document.documentElement.scrollWidth, window: width, out: out };",
    )
    .await;
    let scroll = measured["scroll"].as_f64().expect("scrollWidth");
    let window = measured["window"].as_f64().expect("innerWidth");
    assert!(
        scroll <= window,
        "{page} scrolls sideways: {scroll} px wide in a {window} px window; sticking out: {}",
        measured["out"]
    );
}

/// Asserts the page's main heading is shown in the first screen, whole and uncovered.
pub(super) async fn assert_heading_visible(browser: &Browser, page: &str) {
    let heading = browser.find("main h1").await;
    assert!(
        heading
            .is_displayed()
            .await
            .expect("is the heading displayed"),
        "{page}: the main heading is not displayed"
    );
    let seen = js(
        browser,
        "const h = document.querySelector('main h1'), r = h.getBoundingClientRect();
         const top = document.elementFromPoint(r.left + Math.min(r.width / 2, 20), r.top + r.height / 2);
         return { inside: r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0
                      && r.right <= innerWidth && r.bottom <= innerHeight,
                  uncovered: !!top && h.contains(top),
                  text: h.textContent.trim() };",
    )
    .await;
    assert_eq!(
        (&seen["inside"], &seen["uncovered"]),
        (&json!(true), &json!(true)),
        "{page}: the main heading is not wholly visible: {seen}"
    );
    assert_ne!(seen["text"], json!(""), "{page}: an empty main heading");
}

/// On a phone, opens each of `pages` (its path, a selector for an element that shows it
/// is ready, and a name for its screenshot) and asserts that it is laid out for the
/// phone, does not scroll sideways and shows its main heading; then saves its screenshot.
pub(super) async fn assert_pages_fit_the_phone(
    browser: &Browser,
    app: &TestApp,
    pages: &[(&str, &str, &str)],
) {
    for &(path, ready, name) in pages {
        open(browser, app, path, ready).await;
        // Laid out for the phone (the viewport meta tag), not 980 pixels wide and shrunk.
        assert_eq!(
            js(browser, "return window.innerWidth").await,
            json!(390),
            "{path}: the layout width"
        );
        assert_shown_page_fits(browser, path).await;
        browser.screenshot(name).await;
    }
}

/// Asserts the page shown now (`page` names it in a failure) does not scroll sideways
/// and shows its main heading, as every page on a phone must.
pub(super) async fn assert_shown_page_fits(browser: &Browser, page: &str) {
    assert_no_sideways_scroll(browser, page).await;
    assert_heading_visible(browser, page).await;
}

/// Scrolls to the part of the page shown now with id `id` and asserts the page (`page`
/// names it in a failure) still does not scroll sideways.
pub(super) async fn assert_part_fits(browser: &Browser, id: &str, page: &str) {
    scroll_to(browser, id).await;
    assert_no_sideways_scroll(browser, page).await;
}

/// Logs `username` in through the login form, typing as a person does, and waits for
/// the account page it lands on.
pub(super) async fn log_in_with_the_form(browser: &Browser, app: &TestApp, username: &str) {
    open(browser, app, "/login", "#login-form").await;
    browser.fill("#username", username).await;
    browser.fill("#password", PASSWORD).await;
    click_through(browser, "#login-form button[type=submit]", "#tier").await;
    assert_at(browser, "/account").await;
}

/// Revises GPU_Index's 10 Nov (the visitor's latest day in the fixture): its one quote
/// imported again with another price, so its page has a revision to list.
pub(super) async fn revise_the_fixture(app: &TestApp, admin: &Session) {
    let quotes = [("20261110", "GPU_Index", "H100 SXM5 80GB", "1", "29850")];
    import(app, admin, "revision.csv", &quotes).await;
}
