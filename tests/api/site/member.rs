//! The member area: the login form opens the same session as the API's login, keys
//! are created (shown once) and deleted with forms, and the account and usage pages
//! show the caller's own numbers.

use serde_json::json;

use crate::helpers::{spawn_with_fixture, TestApp, PASSWORD};

async fn member(app: &TestApp, name: &str, tier: &str) -> iq_test_support::site::SignedIn {
    app.member(name, tier).await;
    app.form_login(name, PASSWORD).await
}

#[actix_web::test]
async fn the_login_form_opens_a_session_the_api_accepts() {
    let (app, _) = spawn_with_fixture().await.with_member("pat", "pro").await;
    let form = app.page("/login").await;
    assert_eq!(form.status, 200);
    form.assert_has(r#"<label for="username">"#);
    let pre = form.cookie("iq_form").expect("a pre-session cookie");
    let set = form.set_cookies.join("\n");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );

    let wrong = app.post_login(&pre, &form.csrf(), "pat", "nope").await;
    assert_eq!(wrong.status, 401);
    wrong.assert_has("Wrong user name or password.");
    wrong.assert_has(r#"value="pat""#);

    let ok = app.post_login(&pre, &form.csrf(), "pat", PASSWORD).await;
    assert_eq!(ok.status, 303);
    assert_eq!(ok.header("location"), Some("/account"));
    let cookie = ok.cookie("iq_session").expect("the session cookie");
    let set = ok.set_cookies.join("\n");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax"),
        "{set}"
    );
    // The same session as the API's login: membership knows it.
    let membership = app
        .call(
            reqwest::Method::GET,
            "/api/v1/membership",
            None,
            Some(&iq_test_support::Session {
                cookie,
                csrf: String::new(),
                user_id: String::new(),
            }),
            false,
        )
        .await;
    assert_eq!(membership.data()["identity"], "session");
    assert_eq!(membership.data()["tier"], "pro");
}

#[actix_web::test]
async fn failed_logins_past_the_limit_wait_for_the_next_minute() {
    let (app, _) = spawn_with_fixture().await.with_member("pat", "free").await;
    let form = app.page("/login").await;
    let pre = form.cookie("iq_form").unwrap();
    let mut last = None;
    for _ in 0..6 {
        last = Some(app.post_login(&pre, &form.csrf(), "pat", "bad").await);
    }
    let last = last.unwrap();
    assert_eq!(last.status, 429, "{}", last.html);
    assert!(last.header("retry-after").is_some());
    last.assert_has(r#"id="login-problem""#);
}

#[actix_web::test]
async fn member_pages_send_a_visitor_to_the_login_form() {
    let app = spawn_with_fixture().await;
    for path in [
        "/account",
        "/account/keys",
        "/account/usage",
        "/account/webhooks",
        "/account/webhooks/wh_1",
    ] {
        let page = app.page(path).await;
        assert_eq!(page.status, 303, "{path}");
        assert_eq!(page.header("location"), Some("/login"));
    }
}

#[actix_web::test]
async fn a_key_made_with_the_form_is_shown_once_works_and_can_be_deleted() {
    let app = spawn_with_fixture().await;
    let pat = member(&app, "pat", "pro").await;
    let keys = app.page_with(&pat.cookies, "/account/keys").await;
    assert_eq!(keys.status, 200);
    keys.assert_has("You have no keys yet.");
    let created = app
        .post_key_form(
            &pat,
            &keys.csrf(),
            &[
                ("name", "laptop"),
                ("index_code", "Hardware_Index"),
                ("expires_on", ""),
            ],
        )
        .await;
    let key = created.shown_key();
    assert!(key.starts_with("iq_"), "{key}");
    created.assert_has("Hardware_Index");

    // The key works, within its index range.
    let reply = app
        .query_with(json!({"api_name": "index_latest"}), Some(&key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.column("index_code"), [json!("Hardware_Index")]);

    // Never shown again.
    let list = app.page_with(&pat.cookies, "/account/keys").await;
    list.assert_has("laptop");
    list.assert_lacks(&key);
    let account = app.page_with(&pat.cookies, "/account").await;
    account.assert_has(r#"<dd id="tier">pro</dd>"#);
    account.assert_lacks(&key);

    let id_start = list.html.find("data-key-id=\"").unwrap() + 13;
    let id = &list.html[id_start..id_start + list.html[id_start..].find('"').unwrap()];
    // Delete asks first, on a page of its own: what it means, and the button.
    let path = format!("/account/keys/{id}/delete");
    list.assert_has(&format!(r#"href="{path}""#));
    let confirm = app.page_with(&pat.cookies, &path).await;
    assert_eq!(confirm.status, 200, "{}", confirm.html);
    confirm.assert_has("Delete the key “laptop”?");
    confirm.assert_has(r#"id="confirm-delete""#);
    confirm.assert_has(r#"<a href="/account/keys" id="keep-key">"#);
    let unknown = app
        .page_with(&pat.cookies, "/account/keys/no-such-key/delete")
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.html);
    let deleted = app.submit(&pat, &path, &confirm.csrf(), &[]).await;
    assert_eq!(deleted.status, 303);
    assert_eq!(deleted.header("location"), Some("/account/keys?deleted=1"));
    let after = app.page_with(&pat.cookies, "/account/keys?deleted=1").await;
    after.assert_has(r#"id="key-deleted""#);
    after.assert_has("You have no keys yet.");
    let refused = app
        .query_with(json!({"api_name": "index_latest"}), Some(&key))
        .await;
    refused.assert_error(401, 40102);
}

#[actix_web::test]
async fn at_the_plans_number_of_keys_the_page_says_so_instead_of_the_form() {
    let app = spawn_with_fixture().await;
    // The free plan allows one key.
    let fred = member(&app, "fred", "free").await;
    let keys = app.page_with(&fred.cookies, "/account/keys").await;
    keys.assert_has(r#"id="create-key""#);
    keys.assert_lacks(r#"id="key-limit""#);
    let created = app
        .post_key_form(&fred, &keys.csrf(), &[("name", "only"), ("expires_on", "")])
        .await;
    assert_eq!(created.status, 200, "{}", created.html);
    let full = app.page_with(&fred.cookies, "/account/keys").await;
    full.assert_has(r#"id="key-limit""#);
    full.assert_has("Your plan allows 1 key, and you have it");
    full.assert_has(r#"<a href="/plans">plans</a>"#);
    full.assert_lacks(r#"id="create-key""#);
}

#[actix_web::test]
async fn a_refused_key_form_says_why_and_keeps_what_was_typed() {
    let app = spawn_with_fixture().await;
    let pat = member(&app, "pat", "free").await;
    let keys = app.page_with(&pat.cookies, "/account/keys").await;
    let refused = app
        .post_key_form(
            &pat,
            &keys.csrf(),
            &[("name", "old"), ("expires_on", "2020-01-01")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    refused.assert_has(r#"id="key-problem""#);
    refused.assert_has(r#"value="old""#);
    let bad_date = app
        .post_key_form(&pat, &keys.csrf(), &[("name", "x"), ("expires_on", "soon")])
        .await;
    assert_eq!(bad_date.status, 400);
    bad_date.assert_has("2027-01-31");
}

#[actix_web::test]
async fn usage_and_account_show_the_calls_made_today() {
    let app = spawn_with_fixture().await;
    let key = app.member_key("kim", "pro").await;
    for _ in 0..3 {
        let reply = app
            .query_with(json!({"api_name": "index_basic"}), Some(&key.key))
            .await;
        assert_eq!(reply.code(), 0);
    }
    let kim = app.form_login("kim", PASSWORD).await;
    let shown = crate::helpers::eventually(std::time::Duration::from_secs(10), || async {
        app.page_with(&kim.cookies, "/account/usage")
            .await
            .html
            .contains(r#"<strong id="usage-total">3</strong>"#)
    })
    .await;
    assert!(shown, "usage never showed the 3 calls");
    let usage = app.page_with(&kim.cookies, "/account/usage").await;
    usage.assert_has("20261120");
    usage.assert_has(r#"class="chart""#);
    let account = app.page_with(&kim.cookies, "/account").await;
    account.assert_has(r#"<dd id="calls-today">3</dd>"#);
}

#[actix_web::test]
async fn logout_ends_the_session() {
    let app = spawn_with_fixture().await;
    let pat = member(&app, "pat", "pro").await;
    let account = app.page_with(&pat.cookies, "/account").await;
    let out = app.submit(&pat, "/logout", &account.csrf(), &[]).await;
    assert_eq!(out.status, 303);
    assert!(
        out.set_cookies
            .iter()
            .any(|c| c.starts_with("iq_session=;")),
        "{:?}",
        out.set_cookies
    );
    // The old cookie no longer opens the account.
    assert_eq!(app.page_with(&pat.cookies, "/account").await.status, 303);
}
