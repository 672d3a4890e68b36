//! Passwords and sessions (D23): a change ends the user's other sessions and the old
//! password stops working; a reset link works once, for a day, and only a super
//! administrator issues one; one's sessions are listed and any of them can be ended.

use super::*;

const NEW_PASSWORD: &str = "a brand new passphrase";

async fn change(app: &TestApp, session: &Session, current: &str, new: &str) -> Reply {
    app.send_as(
        session,
        Method::POST,
        "/api/v1/auth/password",
        json!({"current_password": current, "new_password": new}),
    )
    .await
}

#[actix_web::test]
async fn a_change_ends_the_other_sessions_and_the_old_password_fails() {
    let (app, here) = spawn_app().await.with_member("alice", "free").await;
    let elsewhere = app.login_ok("alice").await;

    let wrong = change(&app, &here, "not my password at all", NEW_PASSWORD).await;
    wrong.assert_error(400, 40001);
    assert!(
        wrong.message().contains("current_password"),
        "{}",
        wrong.body
    );
    let short = change(&app, &here, PASSWORD, "short").await;
    short.assert_error(400, 40001);
    assert!(short.message().contains("new_password"), "{}", short.body);
    // Without the CSRF token, nothing happens.
    app.call(
        Method::POST,
        "/api/v1/auth/password",
        Some(json!({"current_password": PASSWORD, "new_password": NEW_PASSWORD})),
        Some(&here),
        false,
    )
    .await
    .assert_error(403, 40301);

    let changed = change(&app, &here, PASSWORD, NEW_PASSWORD).await;
    assert_eq!(changed.code(), 0, "{}", changed.body);
    assert_eq!(
        changed.data(),
        &json!({"changed": true, "sessions_ended": 1})
    );
    // This session goes on; the other one is over.
    assert_eq!(app.list_keys(&here).await.code(), 0);
    app.list_keys(&elsewhere).await.assert_error(401, 40102);
    let (old, _) = app.login("alice", PASSWORD).await;
    old.assert_error(401, 40102);
    let (new, _) = app.login("alice", NEW_PASSWORD).await;
    assert_eq!(new.code(), 0, "{}", new.body);

    // One record, of this request, holding neither password.
    let records = app
        .audit_records("user.password_changed", &format!("user:{}", here.user_id))
        .await;
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        records[0]["request_id"].as_str(),
        changed.header("x-request-id")
    );
    assert_eq!(records[0]["actor"]["username"], "alice");
    let text = records[0].to_string();
    assert!(
        !text.contains(PASSWORD) && !text.contains(NEW_PASSWORD),
        "{text}"
    );
}

/// Issues a reset link for `user_id` as `admin`; the link's token.
async fn issue(app: &TestApp, admin: &Session, user_id: &str) -> Reply {
    let path = format!("/api/v1/admin/users/{user_id}/password-reset");
    app.send_as(admin, Method::POST, &path, json!({})).await
}

/// The reset page's form sent as a browser would: the page first, then the post.
async fn use_link(app: &TestApp, link: &str, password: &str) -> iq_test_support::site::PageReply {
    let page = app.page(link).await;
    assert_eq!(page.status, 200, "{}", page.html);
    let cookie = page.cookie("iq_form").expect("the reset page sets iq_form");
    let token = link.split_once("token=").unwrap().1;
    app.post_form(
        &cookie,
        "/reset",
        &[
            ("csrf", &page.csrf()),
            ("token", token),
            ("new_password", password),
            ("confirm_password", password),
        ],
    )
    .await
}

#[actix_web::test]
async fn a_reset_link_works_once_for_a_day_and_ends_every_session() {
    let (app, root) = spawn_app().await.with_admin().await;
    let bob = app.user(&root, "bob", "free").await;

    // Only a super administrator issues one.
    let operator = app.user_with_role(&root, "operator", "admin").await;
    issue(&app, &operator, &bob.user_id)
        .await
        .assert_error(403, 40301);
    issue(&app, &root, "999999").await.assert_error(404, 40401);

    let issued = issue(&app, &root, &bob.user_id).await;
    assert_eq!(issued.code(), 0, "{}", issued.body);
    assert_eq!(issued.header("cache-control"), Some("no-store"));
    let link = issued.data()["link"].as_str().unwrap().to_string();
    assert!(link.starts_with("/reset?token="), "{link}");
    // What is stored is the token's SHA-256 digest, not the token.
    let token = link.split_once("token=").unwrap().1;
    let stored: Vec<u8> = app
        .db
        .query_one(
            "SELECT token_hash FROM password_resets WHERE user_id = $1",
            &[&bob.user_id.parse::<i64>().unwrap()],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(stored, iq_actors::accounts::token::digest(token).to_vec());
    assert_ne!(stored, token.as_bytes());

    let done = use_link(&app, &link, NEW_PASSWORD).await;
    assert_eq!(done.status, 200, "{}", done.html);
    done.assert_has(r#"id="reset-done""#);
    app.list_keys(&bob).await.assert_error(401, 40102);
    app.login("bob", PASSWORD).await.0.assert_error(401, 40102);
    assert_eq!(app.login("bob", NEW_PASSWORD).await.0.code(), 0);

    // Once only.
    let again = app.page(&link).await;
    assert_eq!(again.status, 400);
    again.assert_has("does not work");

    // A day only; and a newer link voids an older one.
    let first = issue(&app, &root, &bob.user_id).await.data()["link"]
        .as_str()
        .unwrap()
        .to_string();
    let second = issue(&app, &root, &bob.user_id).await.data()["link"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(app.page(&first).await.status, 400);
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.page(&second).await.status, 400);

    // The day that passed ended root's session too.
    let root = app.login_ok("root").await;
    let records = |action: &str| {
        let query = format!("action={action}&target=user:{}", bob.user_id);
        let (app, root) = (&app, &root);
        async move {
            app.audit(root, &query).await.data()["items"]
                .as_array()
                .unwrap()
                .clone()
        }
    };
    assert_eq!(records("user.password_reset_issued").await.len(), 3);
    let used = records("user.password_reset").await;
    assert_eq!(used.len(), 1, "{used:?}");
    assert_eq!(used[0]["actor"]["username"], "bob");
    assert!(!app
        .audit(&root, "limit=500")
        .await
        .body
        .to_string()
        .contains(token));
}

#[actix_web::test]
async fn ones_sessions_are_listed_and_any_can_be_ended() {
    let (app, here) = spawn_app().await.with_member("carol", "free").await;
    let phone = app.login_ok("carol").await;
    let other_user = app.login_ok("root").await;

    let listed = app.get_as(&here, "/api/v1/auth/sessions").await;
    assert_eq!(listed.code(), 0, "{}", listed.body);
    let sessions = listed.data().as_array().unwrap().clone();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert_eq!(sessions.iter().filter(|s| s["current"] == true).count(), 1);
    assert_eq!(sessions[0]["address"], "127.0.0.1");
    let theirs = sessions.iter().find(|s| s["current"] == false).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The list never holds a session's secret id or CSRF token.
    for secret in [
        &here.cookie["iq_session=".len()..],
        here.csrf.as_str(),
        phone.csrf.as_str(),
    ] {
        assert!(!listed.body.to_string().contains(secret));
    }

    // Someone else's session is not found; the phone's ends at once.
    let roots = app
        .get_as(&other_user, "/api/v1/auth/sessions")
        .await
        .data()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = |id: &str| format!("/api/v1/auth/sessions/{id}");
    app.send_as(&here, Method::DELETE, &path(&roots), json!({}))
        .await
        .assert_error(404, 40401);
    let ended = app
        .send_as(&here, Method::DELETE, &path(&theirs), json!({}))
        .await;
    assert_eq!(ended.code(), 0, "{}", ended.body);
    app.list_keys(&phone).await.assert_error(401, 40102);
    assert_eq!(app.list_keys(&other_user).await.code(), 0);
    assert_eq!(app.list_keys(&here).await.code(), 0);
}

#[actix_web::test]
async fn a_reset_link_dies_when_its_owner_changes_the_password() {
    let (app, root) = spawn_app().await.with_admin().await;
    let bob = app.user(&root, "bob", "free").await;
    let link = issue(&app, &root, &bob.user_id).await.data()["link"]
        .as_str()
        .unwrap()
        .to_string();
    // The form opened while the link worked...
    let page = app.page(&link).await;
    assert_eq!(page.status, 200, "{}", page.html);
    let changed = change(&app, &bob, PASSWORD, NEW_PASSWORD).await;
    assert_eq!(changed.code(), 0, "{}", changed.body);
    // ...sets nothing once bob changed his password: the link was for the old one.
    let token = link.split_once("token=").unwrap().1;
    let other = "yet another passphrase";
    let dead = app
        .post_form(
            &page.cookie("iq_form").unwrap(),
            "/reset",
            &[
                ("csrf", &page.csrf()),
                ("token", token),
                ("new_password", other),
                ("confirm_password", other),
            ],
        )
        .await;
    assert_eq!(dead.status, 400, "{}", dead.html);
    dead.assert_has("does not work");
    assert_eq!(app.page(&link).await.status, 400);
    assert_eq!(app.login("bob", NEW_PASSWORD).await.0.code(), 0);
    app.login("bob", other).await.0.assert_error(401, 40102);
}
