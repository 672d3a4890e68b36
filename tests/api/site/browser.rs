//! The website in a real browser (headless Chromium): what a person sees and does on it.
//! The HTTP-level checks of the same pages are in `public` and `member`; these are about
//! layout, the script, forms filled in by typing, the keyboard and the phone.
//!
//! Every test saves screenshots under `target/screenshots/browser_*.png` to look at. A
//! test waits for what it needs (an element, the page's `load` event, the page that
//! replaces the one shown) and never sleeps.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::{json, Value};

use crate::helpers::{spawn_with_fixture, TestApp, PASSWORD};

/// WebDriver's keys (the code points fantoccini's `Key` sends).
const TAB: &str = "\u{e004}";
const ENTER: &str = "\u{e007}";

/// Runs `script` in the page and returns what it returns.
async fn js(browser: &Browser, script: &str) -> Value {
    browser
        .client()
        .execute(script, vec![])
        .await
        .unwrap_or_else(|err| panic!("the script {script:?} failed: {err}"))
}

/// Waits for the current page's `load` event, after which its deferred script has run.
async fn loaded(browser: &Browser) {
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
async fn mark_page(browser: &Browser) {
    js(
        browser,
        "document.documentElement.setAttribute('data-left', '')",
    )
    .await;
}

/// Waits for a page other than the one [`mark_page`] marked, with an element matching
/// `css`, to be shown and loaded.
async fn next_page(browser: &Browser, css: &str) {
    browser
        .wait_for(&format!("html:not([data-left]) {css}"))
        .await;
    loaded(browser).await;
}

/// Opens `path` and waits for it to be loaded with an element matching `css`.
async fn open(browser: &Browser, app: &TestApp, path: &str, css: &str) {
    browser.goto(&format!("{}{path}", app.address)).await;
    browser.wait_for(css).await;
    loaded(browser).await;
}

fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.find('/').map_or("/", |at| &rest[at..])
}

/// The attribute `attribute` of each element matching `selector`, in document order.
async fn attributes(browser: &Browser, selector: &str, attribute: &str) -> Vec<String> {
    let script = format!(
        "return [...document.querySelectorAll({})].map(e => e.getAttribute({}))",
        json!(selector),
        json!(attribute)
    );
    serde_json::from_value(js(browser, &script).await).expect("a list of strings")
}

/// The element that has the focus, described as `tag#id.class "text"`.
async fn focused(browser: &Browser) -> String {
    let described = js(
        browser,
        "const e = document.activeElement;
         if (!e) return 'nothing';
         return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
             + (e.className && typeof e.className === 'string' ? '.' + e.className : '')
             + ' \"' + (e.textContent || '').trim().slice(0, 40) + '\"';",
    )
    .await;
    described.as_str().unwrap_or_default().to_owned()
}

/// Sends `keys` to the element that has the focus (the body when nothing has), as a
/// person typing on the keyboard does.
async fn press(browser: &Browser, keys: &str) {
    let active = browser
        .client()
        .active_element()
        .await
        .expect("the element that has the focus");
    if let Err(err) = active.send_keys(keys).await {
        panic!(
            "could not type {keys:?} on {}: {err}",
            focused(browser).await
        );
    }
}

/// Asserts the focused element can be seen: inside the window and with a focus outline.
async fn assert_focus_is_visible(browser: &Browser) {
    let seen = js(
        browser,
        "const e = document.activeElement, r = e.getBoundingClientRect(), s = getComputedStyle(e);
         return { inside: r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0
                      && r.right <= innerWidth && r.bottom <= innerHeight,
                  outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0 };",
    )
    .await;
    assert_eq!(
        seen,
        json!({"inside": true, "outline": true}),
        "the focus on {} should be on screen and outlined",
        focused(browser).await
    );
}

/// Asserts the page is no wider than the window (nothing scrolls it sideways), naming the
/// elements that stick out when it is.
async fn assert_no_sideways_scroll(browser: &Browser, page: &str) {
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
async fn assert_heading_visible(browser: &Browser, page: &str) {
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

/// Logs `username` in through the login form, typing as a person does, and waits for
/// the account page it lands on.
async fn log_in_with_the_form(browser: &Browser, app: &TestApp, username: &str) {
    open(browser, app, "/login", "#login-form").await;
    browser.fill("#username", username).await;
    browser.fill("#password", PASSWORD).await;
    mark_page(browser).await;
    browser.click("#login-form button[type=submit]").await;
    next_page(browser, "#tier").await;
    assert_eq!(path_of(&browser.current_url().await), "/account");
}

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
    let app = spawn_with_fixture().await;
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
    mark_page(&browser).await;
    browser.click("li.card[data-index=Server_Index] h2 a").await;
    next_page(&browser, "#chart svg.chart").await;
    assert_eq!(
        path_of(&browser.current_url().await),
        "/indexes/Server_Index"
    );
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
    browser.close().await;
}

#[actix_web::test]
async fn a_pro_member_logs_in_and_makes_uses_and_deletes_a_key() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    app.user(&admin, "pat", "pro").await;
    let browser = Browser::open(Viewport::Desktop).await;

    log_in_with_the_form(&browser, &app, "pat").await;
    assert_eq!(browser.text_of("#tier").await, "pro");
    assert_eq!(browser.text_of("#account-link").await, "pat");
    browser.screenshot("browser_account_pro_desktop").await;

    open(&browser, &app, "/", "li.card[data-index=Hardware_Index]").await;
    let cutoff = browser.text_of("#cutoff").await;
    assert!(cutoff.contains("up to date"), "the cutoff line: {cutoff:?}");
    let server = browser
        .text_of("li.card[data-index=Server_Index] .points")
        .await;
    assert_eq!(server, "999.500000", "the pro plan's Server_Index");
    browser.screenshot("browser_home_pro_desktop").await;

    // To the keys, by the links a person follows.
    mark_page(&browser).await;
    browser.click("#account-link").await;
    next_page(&browser, "#tier").await;
    mark_page(&browser).await;
    browser.click(".subnav a[href='/account/keys']").await;
    next_page(&browser, "#create-key").await;
    assert!(
        browser
            .text_of("main")
            .await
            .contains("You have no keys yet."),
        "a new member's keys"
    );
    browser.fill("#key-name", "browser").await;
    for code in ["Server_Index", "Hardware_Index"] {
        let checkbox = format!("input[name=index_code][value={code}]");
        browser.click(&checkbox).await;
        assert!(
            browser.find(&checkbox).await.is_selected().await.unwrap(),
            "{code} is not ticked"
        );
    }
    mark_page(&browser).await;
    browser.click("#create-key button[type=submit]").await;
    next_page(&browser, "#new-key").await;

    // The key, once, whole and on screen.
    let key = browser.text_of("#new-key").await;
    assert!(
        key.starts_with("iq_") && key.len() > 20,
        "the new key: {key:?}"
    );
    let shown = js(
        &browser,
        "const k = document.getElementById('new-key'), r = k.getBoundingClientRect();
         return { whole: k.scrollWidth <= k.clientWidth + 1, inside: r.right <= innerWidth };",
    )
    .await;
    assert_eq!(shown, json!({"whole": true, "inside": true}), "the new key");
    let facts = browser.text_of("main dl.facts").await;
    assert!(
        facts.contains("Server_Index") && facts.contains("Hardware_Index"),
        "the new key's indexes: {facts}"
    );
    browser.screenshot("browser_key_created_once_desktop").await;

    let reply = app
        .query_with(json!({"api_name": "index_latest"}), Some(&key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let mut codes = reply.column("index_code");
    codes.sort_by_key(|c| c.to_string());
    assert_eq!(codes, [json!("Hardware_Index"), json!("Server_Index")]);

    // Never shown again.
    open(&browser, &app, "/account/keys", "tr[data-key-id]").await;
    let source = browser.page_source().await;
    assert!(!source.contains(&key), "the keys page shows the key again");
    let name = browser
        .find("#keys tbody tr input[name=name]")
        .await
        .prop("value")
        .await
        .expect("the name field's value");
    assert_eq!(name.as_deref(), Some("browser"), "the key's name");
    browser.screenshot("browser_keys_list_desktop").await;

    mark_page(&browser).await;
    browser
        .click("button[aria-label='Delete key browser']")
        .await;
    next_page(&browser, "#create-key").await;
    assert_eq!(path_of(&browser.current_url().await), "/account/keys");
    assert!(
        attributes(&browser, "tr[data-key-id]", "data-key-id")
            .await
            .is_empty(),
        "the deleted key is still listed"
    );
    assert!(browser
        .text_of("main")
        .await
        .contains("You have no keys yet."));
    browser.screenshot("browser_keys_deleted_desktop").await;
    app.query_with(json!({"api_name": "index_latest"}), Some(&key))
        .await
        .assert_error(401, 40102);
    browser.close().await;
}

#[actix_web::test]
async fn on_a_phone_pages_fit_the_screen_and_show_their_heading() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    app.user(&admin, "pat", "pro").await;
    let browser = Browser::open(Viewport::Phone).await;

    for (path, ready, name) in [
        ("/", "li.card", "browser_phone_home"),
        (
            "/indexes/Server_Index",
            "#chart svg.chart",
            "browser_phone_index",
        ),
        ("/login", "#login-form", "browser_phone_login"),
    ] {
        open(&browser, &app, path, ready).await;
        // Laid out for the phone (the viewport meta tag), not 980 pixels wide and shrunk.
        assert_eq!(
            js(&browser, "return window.innerWidth").await,
            json!(390),
            "{path}: the layout width"
        );
        assert_no_sideways_scroll(&browser, path).await;
        assert_heading_visible(&browser, path).await;
        browser.screenshot(name).await;
    }
    // The lower part of the index page: its tables are the widest things on it.
    open(&browser, &app, "/indexes/Server_Index", "#quotes").await;
    js(
        &browser,
        "document.getElementById('quotes').scrollIntoView()",
    )
    .await;
    assert_no_sideways_scroll(&browser, "/indexes/Server_Index (tables)").await;
    browser.screenshot("browser_phone_index_tables").await;

    log_in_with_the_form(&browser, &app, "pat").await;
    assert_no_sideways_scroll(&browser, "/account").await;
    assert_heading_visible(&browser, "/account").await;
    browser.screenshot("browser_phone_account").await;

    open(&browser, &app, "/account/keys", "#create-key").await;
    assert_no_sideways_scroll(&browser, "/account/keys").await;
    assert_heading_visible(&browser, "/account/keys").await;
    browser.screenshot("browser_phone_keys_empty").await;

    // A key made on the phone: its page, with the long key, and the list with its row.
    browser.fill("#key-name", "phone").await;
    mark_page(&browser).await;
    browser.click("#create-key button[type=submit]").await;
    next_page(&browser, "#new-key").await;
    assert_no_sideways_scroll(&browser, "the new key's page").await;
    assert_heading_visible(&browser, "the new key's page").await;
    browser.screenshot("browser_phone_key_created").await;

    open(&browser, &app, "/account/keys", "tr[data-key-id]").await;
    assert_no_sideways_scroll(&browser, "/account/keys with a key").await;
    assert_heading_visible(&browser, "/account/keys with a key").await;
    browser.screenshot("browser_phone_keys").await;
    browser.close().await;
}

#[actix_web::test]
async fn a_keyboard_alone_logs_in_and_makes_a_key() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    app.user(&admin, "pat", "pro").await;
    let browser = Browser::open(Viewport::Desktop).await;

    // Home: the first Tab shows the skip link, then Tab goes along the header, with a
    // visible focus all the way, to "Log in".
    open(&browser, &app, "/", "#login-link").await;
    press(&browser, TAB).await;
    assert!(
        focused(&browser).await.starts_with("a.skip "),
        "the first Tab focuses {}, not the skip link",
        focused(&browser).await
    );
    assert_focus_is_visible(&browser).await;
    browser.screenshot("browser_keyboard_skip_link").await;
    let mut path = Vec::new();
    while !focused(&browser).await.starts_with("a#login-link") {
        assert!(path.len() < 12, "Tab never reached Log in: {path:?}");
        press(&browser, TAB).await;
        assert_focus_is_visible(&browser).await;
        path.push(focused(&browser).await);
    }
    assert!(
        path[0].starts_with("a.brand "),
        "Tab from the skip link goes to {path:?}"
    );
    mark_page(&browser).await;
    press(&browser, ENTER).await;
    next_page(&browser, "#login-form").await;

    // Login: every field has its label; the cursor starts in the user name.
    let unlabelled = js(
        &browser,
        "return [...document.querySelectorAll('main input:not([type=hidden])')]
             .filter(i => i.labels.length === 0 || !i.labels[0].textContent.trim())
             .map(i => i.id || i.name)",
    )
    .await;
    assert_eq!(unlabelled, json!([]), "inputs of /login without a label");
    let labelled_by_for = js(
        &browser,
        "return ['username', 'password'].every(id => !!document.querySelector(`label[for=${id}]`))",
    )
    .await;
    assert_eq!(labelled_by_for, json!(true), "label for= on /login");
    // The autofocus may come just after the load event: wait for it (5 s at most).
    let autofocused = browser
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1], u = document.getElementById('username');
             if (document.activeElement === u) { done(true); return; }
             u.addEventListener('focus', () => done(true), { once: true });
             setTimeout(() => done(document.activeElement === u), 5000);",
            vec![],
        )
        .await
        .expect("waiting for the autofocus");
    assert_eq!(
        autofocused,
        json!(true),
        "the cursor is not in the user name on /login but on {}",
        focused(&browser).await
    );
    press(&browser, "pat").await;
    press(&browser, TAB).await;
    assert!(
        focused(&browser).await.starts_with("input#password"),
        "Tab from the user name goes to {}",
        focused(&browser).await
    );
    assert_focus_is_visible(&browser).await;
    press(&browser, PASSWORD).await;
    browser.screenshot("browser_keyboard_login_typed").await;
    mark_page(&browser).await;
    press(&browser, ENTER).await;
    next_page(&browser, "#tier").await;
    assert_eq!(path_of(&browser.current_url().await), "/account");
    assert_eq!(browser.text_of("#tier").await, "pro");

    // Keys: every field labelled; Enter in the name field makes the key.
    open(&browser, &app, "/account/keys", "#create-key").await;
    let unlabelled = js(
        &browser,
        "return [...document.querySelectorAll('main input:not([type=hidden])')]
             .filter(i => i.labels.length === 0 || !i.labels[0].textContent.trim())
             .map(i => i.id || i.name + '=' + i.value)",
    )
    .await;
    assert_eq!(
        unlabelled,
        json!([]),
        "inputs of /account/keys without a label"
    );
    let checkboxes = attributes(&browser, "input[name=index_code]", "value").await;
    assert!(
        checkboxes.iter().any(|c| c == "Hardware_Index"),
        "the pro plan's indexes to tick: {checkboxes:?}"
    );
    // The skip link jumps over the header: the next Tab is in the page's content.
    press(&browser, TAB).await;
    assert!(
        focused(&browser).await.starts_with("a.skip "),
        "the first Tab on /account/keys focuses {}",
        focused(&browser).await
    );
    press(&browser, ENTER).await;
    assert!(
        browser.current_url().await.ends_with("/account/keys#main"),
        "the skip link leads to {}",
        browser.current_url().await
    );
    press(&browser, TAB).await;
    let mut path = vec![focused(&browser).await];
    let in_main = js(
        &browser,
        "return document.querySelector('main').contains(document.activeElement)",
    )
    .await;
    assert_eq!(in_main, json!(true), "Tab after the skip link: {path:?}");
    while !focused(&browser).await.starts_with("input#key-name") {
        assert!(path.len() < 8, "Tab never reached the key's name: {path:?}");
        press(&browser, TAB).await;
        assert_focus_is_visible(&browser).await;
        path.push(focused(&browser).await);
    }
    press(&browser, "keyboard").await;
    mark_page(&browser).await;
    press(&browser, ENTER).await;
    next_page(&browser, "#new-key").await;
    assert!(browser.text_of("main h1").await.ends_with("keyboard"));
    let key = browser.text_of("#new-key").await;
    assert_eq!(
        app.query_with(json!({"api_name": "index_latest"}), Some(&key))
            .await
            .code(),
        0
    );
    browser.screenshot("browser_keyboard_key_created").await;
    browser.close().await;
}
