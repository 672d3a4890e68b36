//! Users: creation, changes, disabling.

use super::*;

#[actix_web::test]
async fn creating_users_validates_the_body() {
    let (app, admin) = spawn_app().await.with_admin().await;

    let created = app
        .create_user(&admin, json!({"username": "bob", "password": PASSWORD}))
        .await;
    assert_eq!(created.code(), 0, "{}", created.body);
    let data = created.data();
    assert!(data["id"].is_string(), "{data}");
    assert_eq!(data["username"], "bob");
    assert_eq!(data["role"], "user", "role defaults to user");
    assert_eq!(data["tier"], "free", "tier defaults to free");
    assert!(data.get("password").is_none() && data.get("password_hash").is_none());

    let duplicate = app
        .create_user(
            &admin,
            json!({"username": "bob", "password": PASSWORD, "tier": "pro"}),
        )
        .await;
    duplicate.assert_error(409, 40901);

    // Each refused body names the field at fault.
    for (body, field) in [
        (
            json!({"username": "carol", "password": PASSWORD, "role": "owner"}),
            "role",
        ),
        (
            json!({"username": "carol", "password": PASSWORD, "tier": "gold"}),
            "tier",
        ),
        (
            json!({"username": "carol", "password": PASSWORD, "email": "c@example.com"}),
            "email",
        ),
        (
            json!({"username": "carol", "password": "short"}),
            "password",
        ),
    ] {
        app.create_user(&admin, body)
            .await
            .assert_error_mentioning(400, 40001, field);
    }

    // None of the refused bodies created carol.
    let (carol, _) = app.login("carol", PASSWORD).await;
    carol.assert_error(401, 40102);
}

#[actix_web::test]
async fn patching_an_unknown_user_is_404() {
    let (app, admin) = spawn_app().await.with_admin().await;
    for id in ["999999", "not-an-id"] {
        app.patch_user(&admin, id, json!({"active": false}))
            .await
            .assert_error(404, 40401);
    }
    let bob = app.user(&admin, "bob", "free").await;
    let bad = app
        .patch_user(&admin, &bob.user_id, json!({"tier": "gold"}))
        .await;
    bad.assert_error_mentioning(400, 40001, "tier");
}

#[actix_web::test]
async fn a_disabled_user_can_neither_log_in_nor_use_an_open_session() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let bob = app.user(&admin, "bob", "free").await;
    assert_eq!(app.list_keys(&bob).await.code(), 0);

    let patched = app
        .patch_user(&admin, &bob.user_id, json!({"active": false}))
        .await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["active"], false);
    assert_eq!(patched.data()["username"], "bob");

    let (login, session) = app.login("bob", PASSWORD).await;
    login.assert_error(403, 40301);
    assert!(session.is_none());
    app.list_keys(&bob).await.assert_error(403, 40301);

    // Re-enabled, the account works again.
    let enabled = app
        .patch_user(&admin, &bob.user_id, json!({"active": true}))
        .await;
    assert_eq!(enabled.code(), 0, "{}", enabled.body);
    app.login_ok("bob").await;
}
