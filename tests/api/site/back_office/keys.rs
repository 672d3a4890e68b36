//! Keys from the pages: an administrator finds a key with its owner and edits its
//! limits, scope and indexes (felt by the key at once), a deleted or unknown key has no
//! page, and an owner rotates and renames their own key on `/account/keys`.

use iq_test_support::site::PageReply;
use serde_json::json;

use super::{back_office, root};
use crate::helpers::{spawn_with_fixture, PASSWORD};

/// The first `data-key-id` of a page.
fn first_key_id(page: &PageReply) -> String {
    let start = page.html.find("data-key-id=\"").expect("a key row") + 13;
    page.html[start..start + page.html[start..].find('"').unwrap()].to_owned()
}

#[actix_web::test]
async fn a_key_is_listed_with_its_owner_and_edited_from_its_page() {
    let (app, admin, root) = back_office().await;
    let key = app.key_of_tier(&admin, "kim", "pro").await;
    let list = app.page_with(&root.cookies, "/admin/keys").await;
    assert_eq!(list.status, 200);
    list.assert_has(&format!(r#"data-key-id="{}""#, key.id));
    list.assert_has(">kim</a>");
    let page = app
        .page_with(&root.cookies, &format!("/admin/keys/{}", key.id))
        .await;
    assert_eq!(page.status, 200, "{}", page.html);
    let token = page.csrf();
    let path = format!("/admin/keys/{}", key.id);
    let bad = app
        .submit(
            &root,
            &path,
            &token,
            &[("active", "1"), ("per_day", "many")],
        )
        .await;
    assert_eq!(bad.status, 400);
    bad.assert_has("Calls a day must be a whole number.");
    let saved = app
        .submit(
            &root,
            &path,
            &token,
            &[
                ("active", "1"),
                ("per_day", "5"),
                ("scope", "index:read"),
                ("index_codes", "Server_Index, GPU_Index"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let reply = app
        .query_with(json!({"api_name": "index_latest"}), Some(&key.key))
        .await;
    assert_eq!(reply.rate_limit(), 5);
    assert_eq!(
        reply.column("index_code"),
        [json!("Server_Index"), json!("GPU_Index")]
    );
    // Only the scope kept: quotes are refused now.
    let quotes = app
        .query_with(json!({"api_name": "index_quote"}), Some(&key.key))
        .await;
    assert_eq!(quotes.status, 403);
}

#[actix_web::test]
async fn a_deleted_or_unknown_key_has_no_page() {
    let (app, admin, root) = back_office().await;
    let key = app.key_of_tier(&admin, "kim", "pro").await;
    let kim = app.login_ok("kim").await;
    assert_eq!(app.delete_key(&kim, &key.id).await.status, 200);
    for id in [key.id.as_str(), "key_doesnotexist00"] {
        let page = app
            .page_with(&root.cookies, &format!("/admin/keys/{id}"))
            .await;
        assert_eq!(page.status, 404, "{id}: {}", page.html);
        page.assert_has("There is no such key (it may have been deleted).");
    }
}

#[actix_web::test]
async fn an_owner_rotates_and_renames_a_key_from_the_keys_page() {
    let (app, kim_session) = spawn_with_fixture().await.with_member("kim", "pro").await;
    let old = app
        .key_for_indexes(&kim_session, "laptop", &["GPU_Index"])
        .await;
    let kim = app.form_login("kim", PASSWORD).await;
    let keys = app.page_with(&kim.cookies, "/account/keys").await;
    let id = first_key_id(&keys);
    assert_eq!(id, old.id);
    let (rotate, rename) = (
        format!("/account/keys/{id}/rotate"),
        format!("/account/keys/{id}/rename"),
    );
    let rotated = app.submit(&kim, &rotate, &keys.csrf(), &[]).await;
    let new = rotated.shown_key();
    assert_ne!(new, old.key);
    app.query_with(json!({"api_name": "index_latest"}), Some(&old.key))
        .await
        .assert_error(401, 40102);
    let works = app
        .query_with(json!({"api_name": "index_latest"}), Some(&new))
        .await;
    assert_eq!(works.column("index_code"), [json!("GPU_Index")]);

    let renamed = app
        .submit(&kim, &rename, &keys.csrf(), &[("name", "desktop")])
        .await;
    assert_eq!(renamed.status, 303);
    app.page_with(&kim.cookies, "/account/keys")
        .await
        .assert_has(r#"value="desktop""#);
    let empty = app
        .submit(&kim, &rename, &keys.csrf(), &[("name", "  ")])
        .await;
    assert_eq!(empty.status, 400);
    empty.assert_has(r#"id="key-problem""#);
    // Someone else's key is not found, whatever the form says.
    let admin_browser = root(&app).await;
    let root_keys = app.page_with(&admin_browser.cookies, "/account/keys").await;
    let foreign = app
        .submit(&admin_browser, &rotate, &root_keys.csrf(), &[])
        .await;
    assert_eq!(foreign.status, 404);
}
