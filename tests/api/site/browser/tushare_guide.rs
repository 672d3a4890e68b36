//! The Tushare guide in a real browser: reached from the examples page, in English and in
//! Simplified Chinese, each a click from the other, each page declaring its language,
//! its ids unique, its copy buttons answering in its language, its code naming the
//! service's own address, nothing wider than the window.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{
    assert_at, assert_no_sideways_scroll, click_through, js, open, scroll_to,
};

/// Asserts the page shown is the guide at `path` in `lang`, with its one line naming the
/// service's Tushare wire at `address`, and fits the window.
async fn assert_guide(browser: &Browser, path: &str, lang: &str, address: &str) {
    assert_at(browser, path).await;
    assert_eq!(
        js(browser, "return document.documentElement.lang").await,
        json!(lang),
        "{path}: the page's language"
    );
    let sdk = browser.text_of("#guide-sdk").await;
    let line = format!(r#"pro._DataApi__http_url = "{address}/tushare""#);
    assert!(sdk.contains(&line), "{path}: no {line:?} in {sdk:?}");
    assert_no_sideways_scroll(browser, path).await;
    // The names table, the widest part, within the page too.
    scroll_to(browser, "guide-names").await;
    assert_no_sideways_scroll(browser, &format!("{path} (names)")).await;
}

/// Clicks the copy button of the block `id` and answers what the button then says. The
/// clipboard is replaced by one that accepts at once: a headless browser without focus
/// refuses the real one, and what is checked here is the page's answer, in its language.
async fn copy_says(browser: &Browser, id: &str) -> String {
    let script = format!(
        "const done = arguments[arguments.length - 1];
         Object.defineProperty(navigator, 'clipboard',
             {{ value: {{ writeText: () => Promise.resolve() }}, configurable: true }});
         const button = document.querySelector('button[data-copy=\"{id}\"]');
         const before = button.textContent;
         new MutationObserver(() => {{
             if (button.textContent !== before) done(button.textContent);
         }}).observe(button, {{ childList: true, characterData: true, subtree: true }});
         button.click();"
    );
    let said = browser
        .client()
        .execute_async(&script, vec![])
        .await
        .unwrap_or_else(|err| panic!("the copy button of {id}: {err}"));
    said.as_str().unwrap_or_default().to_owned()
}

#[actix_web::test]
async fn a_tushare_user_finds_the_guide_and_switches_its_language() {
    iq_test_support::require!(Browser);
    let app = spawn_with_fixture().await;
    let browser = Browser::open(Viewport::Desktop).await;

    open(&browser, &app, "/examples", "#tushare-guide-link").await;
    click_through(&browser, "#tushare-guide-link", "#guide-sdk").await;
    assert_guide(&browser, "/tushare-guide", "en", &app.address).await;
    assert_eq!(copy_says(&browser, "guide-sdk").await, "Copied");
    scroll_to(&browser, "main").await;
    browser.screenshot("browser_tushare_guide_desktop").await;

    click_through(&browser, "#other-language", "#guide-sdk").await;
    assert_guide(&browser, "/zh-CN/tushare-guide", "zh-CN", &app.address).await;
    assert_eq!(browser.text_of("main h1").await, "从 Tushare 迁移");
    assert_eq!(copy_says(&browser, "guide-sdk").await, "已复制");
    scroll_to(&browser, "main").await;
    browser.screenshot("browser_tushare_guide_zh_desktop").await;

    click_through(&browser, "#other-language", "#guide-sdk").await;
    assert_at(&browser, "/tushare-guide").await;

    // The examples page leads to the Chinese guide as well.
    open(&browser, &app, "/examples", "#tushare-guide-zh-link").await;
    click_through(&browser, "#tushare-guide-zh-link", "#guide-sdk").await;
    assert_at(&browser, "/zh-CN/tushare-guide").await;
    browser.close().await;
}
