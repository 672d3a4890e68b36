//! The website in a real browser (headless Chromium): what a person sees and does on it.
//! The HTTP-level checks of the same pages are in `public` and `member`; these are about
//! layout, the script, forms filled in by typing, the keyboard and the phone.
//!
//! Every test saves screenshots under `target/screenshots/browser_*.png` to look at. A
//! test waits for what it needs (an element, the page's `load` event, the page that
//! replaces the one shown) and never sleeps; the steps it shares with the back office's
//! browser tests are in `browser_steps`.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use super::browser_steps::{
    assert_heading_visible, assert_no_sideways_scroll, assert_pages_fit_the_phone, js,
    log_in_with_the_form, mark_page, next_page, open, path_of,
};
use crate::helpers::{spawn_with_fixture, PASSWORD};

/// WebDriver's keys (the code points fantoccini's `Key` sends).
const TAB: &str = "\u{e004}";
const ENTER: &str = "\u{e007}";

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

/// Asserts the keys page shown lists the key `id` and no other, and returns the start
/// of its secret that its row shows (`iq_Ab3xYz…`), without the ellipsis.
async fn the_only_keys_hint(browser: &Browser, id: &str) -> String {
    let listed = attributes(browser, "tr[data-key-id]", "data-key-id").await;
    assert_eq!(listed, [id], "the keys listed");
    let row = format!("tr[data-key-id={}]", json!(id));
    let shown = browser.text_of(&format!("{row} code")).await;
    shown
        .strip_suffix('…')
        .unwrap_or_else(|| panic!("the key's hint in {row}: {shown:?}"))
        .to_owned()
}

#[actix_web::test]
async fn an_owner_rotates_a_key_and_its_old_secret_is_refused_then_renames_it() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let kim = app.user(&admin, "kim", "pro").await;
    let old = app.new_key(&kim, json!({"name": "laptop"})).await;
    let latest = json!({"api_name": "index_latest"});
    // The old secret works, and so sits in the service's key cache.
    let reply = app.query_with(latest.clone(), Some(&old.key)).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let browser = Browser::open(Viewport::Desktop).await;

    log_in_with_the_form(&browser, &app, "kim").await;
    let row = format!("tr[data-key-id={}]", json!(old.id));
    open(&browser, &app, "/account/keys", &row).await;
    let hint = the_only_keys_hint(&browser, &old.id).await;
    assert!(old.key.starts_with(&hint), "the row shows {hint:?}");
    browser
        .screenshot("browser_keys_before_rotation_desktop")
        .await;

    // A new secret, shown once on its own page.
    mark_page(&browser).await;
    browser
        .click("button[aria-label='New secret for key laptop']")
        .await;
    next_page(&browser, "#new-key").await;
    assert_eq!(browser.text_of("main h1").await, "Your new key: laptop");
    let new = browser.text_of("#new-key").await;
    assert!(
        new.starts_with("iq_") && new.len() == old.key.len(),
        "the new secret: {new:?}"
    );
    assert_ne!(new, old.key, "the rotation showed the old secret again");
    browser
        .screenshot("browser_key_rotated_new_secret_desktop")
        .await;

    // The old secret is refused at once; the new one works.
    app.query_with(latest.clone(), Some(&old.key))
        .await
        .assert_error(401, 40102);
    let reply = app.query_with(latest.clone(), Some(&new)).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    // Back to the keys: the same key, under the new secret's hint, which is not shown whole.
    mark_page(&browser).await;
    browser.click("main a[href='/account/keys']").await;
    next_page(&browser, &row).await;
    assert_eq!(path_of(&browser.current_url().await), "/account/keys");
    let hint = the_only_keys_hint(&browser, &old.id).await;
    assert!(
        new.starts_with(&hint) && !old.key.starts_with(&hint),
        "the row shows {hint:?} after the rotation"
    );
    assert!(
        !browser.page_source().await.contains(&new),
        "the keys page shows the new secret"
    );
    browser
        .screenshot("browser_keys_after_rotation_desktop")
        .await;

    // A new name, typed into the row's own form.
    let name = format!("{row} input[name=name]");
    browser.fill(&name, "desk").await;
    browser.screenshot("browser_key_rename_typed_desktop").await;
    mark_page(&browser).await;
    browser
        .click(&format!("{row} form.rename button[type=submit]"))
        .await;
    next_page(&browser, &row).await;
    assert_eq!(path_of(&browser.current_url().await), "/account/keys");
    let renamed = browser
        .find(&name)
        .await
        .prop("value")
        .await
        .expect("the name field's value");
    assert_eq!(renamed.as_deref(), Some("desk"), "the key's name");
    assert_eq!(
        attributes(&browser, &format!("{row} button[aria-label]"), "aria-label").await,
        ["New secret for key desk", "Delete key desk"],
        "the row's buttons after the rename"
    );
    assert_eq!(
        the_only_keys_hint(&browser, &old.id).await,
        hint,
        "the rename changed the secret's hint"
    );
    browser.screenshot("browser_key_renamed_desktop").await;
    // A new name, the same secret.
    let reply = app.query_with(latest, Some(&new)).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    browser.close().await;
}

#[actix_web::test]
async fn on_a_phone_pages_fit_the_screen_and_show_their_heading() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
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
        ],
    )
    .await;
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
