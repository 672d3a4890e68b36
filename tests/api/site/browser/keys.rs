//! A member's keys in a real browser: logging in through the form, making a key (shown
//! once, whole), using and deleting it; rotating a key, whose old secret is refused at
//! once, and renaming it without touching its secret.

use iq_test_support::browser::{Browser, Viewport};
use serde_json::json;

use super::attributes;
use crate::helpers::spawn_with_fixture;
use crate::site::browser_steps::{assert_at, click_through, js, log_in_with_the_form, open};

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
async fn a_pro_member_logs_in_and_makes_uses_and_deletes_a_key() {
    iq_test_support::require!(Browser);
    let (app, _) = spawn_with_fixture().await.with_member("pat", "pro").await;
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
    click_through(&browser, "#account-link", "#tier").await;
    click_through(&browser, ".subnav a[href='/account/keys']", "#create-key").await;
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
    click_through(&browser, "#create-key button[type=submit]", "#new-key").await;

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

    // Delete asks first, then says it is done.
    click_through(
        &browser,
        "a[aria-label='Delete key browser']",
        "#confirm-delete",
    )
    .await;
    browser
        .screenshot("browser_key_delete_confirm_desktop")
        .await;
    click_through(&browser, "#confirm-delete button", "#key-deleted").await;
    assert_at(&browser, "/account/keys?deleted=1").await;
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
async fn an_owner_rotates_a_key_and_its_old_secret_is_refused_then_renames_it() {
    iq_test_support::require!(Browser);
    let (app, kim) = spawn_with_fixture().await.with_member("kim", "pro").await;
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
    click_through(
        &browser,
        "button[aria-label='New secret for key laptop']",
        "#new-key",
    )
    .await;
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
    click_through(&browser, "main a[href='/account/keys']", &row).await;
    assert_at(&browser, "/account/keys").await;
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
    let rename = format!("{row} form.rename button[type=submit]");
    click_through(&browser, &rename, &row).await;
    assert_at(&browser, "/account/keys").await;
    let renamed = browser
        .find(&name)
        .await
        .prop("value")
        .await
        .expect("the name field's value");
    assert_eq!(renamed.as_deref(), Some("desk"), "the key's name");
    assert_eq!(
        attributes(&browser, &format!("{row} [aria-label]"), "aria-label").await,
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
