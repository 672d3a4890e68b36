//! The website with the keyboard alone: the skip link, a visible focus along the header,
//! labelled fields, the login form's autofocus, and a key made by pressing Enter.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use super::attributes;
use crate::helpers::{spawn_with_fixture, PASSWORD};
use crate::site::browser_steps::{assert_at, js, mark_page, next_page, open};

/// WebDriver's keys (the code points fantoccini's `Key` sends).
const TAB: &str = "\u{e004}";
const ENTER: &str = "\u{e007}";

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

/// Presses Tab and asserts that the focus moves to an element whose description (as
/// [`focused`] writes it) starts with `expected`; `from` says where from, in a failure.
async fn tab_to(browser: &Browser, expected: &str, from: &str) {
    press(browser, TAB).await;
    let now = focused(browser).await;
    assert!(now.starts_with(expected), "Tab from {from} focuses {now}");
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

#[actix_web::test]
async fn a_keyboard_alone_logs_in_and_makes_a_key() {
    iq_test_support::require!(Browser);
    let (app, _) = spawn_with_fixture().await.with_member("pat", "pro").await;
    let browser = Browser::open(Viewport::Desktop).await;

    // Home: the first Tab shows the skip link, then Tab goes along the header, with a
    // visible focus all the way, to "Log in".
    open(&browser, &app, "/", "#login-link").await;
    tab_to(&browser, "a.skip ", "the top of the page").await;
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
    tab_to(&browser, "input#password", "the user name").await;
    assert_focus_is_visible(&browser).await;
    press(&browser, PASSWORD).await;
    browser.screenshot("browser_keyboard_login_typed").await;
    mark_page(&browser).await;
    press(&browser, ENTER).await;
    next_page(&browser, "#tier").await;
    assert_at(&browser, "/account").await;
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
    tab_to(&browser, "a.skip ", "the top of /account/keys").await;
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
