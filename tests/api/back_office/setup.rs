//! Set-up: the first super administrator, once.

use super::*;

#[actix_web::test]
async fn setup_creates_the_first_super_admin_once_and_flips_initialized() {
    let app = spawn_app().await;
    let before = app.config().await;
    assert_eq!(before.code(), 0, "{}", before.body);
    assert_eq!(
        before.data()["initialized"],
        json!(false),
        "{}",
        before.body
    );

    let short = app
        .post_json(
            "/api/v1/setup",
            json!({"username": "root", "password": "too short"}),
        )
        .await;
    short.assert_error_mentioning(400, 40001, "password");
    assert!(!short.message().contains("too short"), "{}", short.body);

    let long = "a".repeat(65);
    for username in ["x", "has space", "semi;colon", long.as_str()] {
        let bad = app
            .post_json(
                "/api/v1/setup",
                json!({"username": username, "password": PASSWORD}),
            )
            .await;
        bad.assert_error_mentioning(400, 40001, "username");
    }
    // Refused set-ups leave the service uninitialised.
    assert_eq!(app.config().await.data()["initialized"], json!(false));

    let first = app
        .post_json(
            "/api/v1/setup",
            json!({"username": "root", "password": PASSWORD}),
        )
        .await;
    assert_eq!((first.status, first.code()), (200, 0), "{}", first.body);
    let data = first.data();
    assert!(
        data["id"].as_str().is_some_and(|id| !id.is_empty()),
        "{data}"
    );
    assert_eq!(data["username"], "root");
    assert_eq!(data["role"], "super_admin");
    assert!(data.get("password").is_none() && data.get("password_hash").is_none());

    let after = app.config().await;
    assert_eq!(after.data()["initialized"], json!(true), "{}", after.body);

    let second = app
        .post_json(
            "/api/v1/setup",
            json!({"username": "another", "password": PASSWORD}),
        )
        .await;
    second.assert_error(409, 40901);
    // The first administrator can sign in; the refused one does not exist.
    app.login_ok("root").await;
    let (refused, _) = app.login("another", PASSWORD).await;
    refused.assert_error(401, 40102);
}

#[actix_web::test]
async fn with_setup_token_required_only_the_printed_token_sets_the_service_up() {
    let app = spawn_with(Spawn::default().tuned(|s| s.accounts.setup_token_required = true)).await;
    let root = json!({"username": "root", "password": PASSWORD});
    app.post_json("/api/v1/setup", root.clone())
        .await
        .assert_error_mentioning(403, 40301, "token");
    let mut guessed = root.clone();
    guessed["token"] = json!("not-the-printed-token");
    app.post_json("/api/v1/setup", guessed)
        .await
        .assert_error_mentioning(400, 40001, "does not work");
    assert_eq!(app.config().await.data()["initialized"], json!(false));
    // The token a start printed (its digest is what the service keeps).
    let printed = "printedToken0123456789";
    app.db
        .execute(
            "INSERT INTO setup_tokens (token_hash, created_at) VALUES ($1, now())",
            &[&iq_actors::accounts::token::digest(printed).as_slice()],
        )
        .await
        .unwrap();
    let mut with_token = root;
    with_token["token"] = json!(printed);
    let done = app.post_json("/api/v1/setup", with_token).await;
    assert_eq!((done.status, done.code()), (200, 0), "{}", done.body);
    assert_eq!(app.config().await.data()["initialized"], json!(true));
}
