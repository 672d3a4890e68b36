//! Index settings: visibility, order, names.

use super::*;

#[actix_web::test]
async fn a_new_sort_no_reorders_index_basic_at_once() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    assert_eq!(visitor_index_codes(&app).await[0], "Server_Index");

    let patched = app
        .patch_index(&admin, "GPU_Index", json!({"sort_no": 1}))
        .await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["sort_no"], 1);
    assert_eq!(patched.data()["index_code"], "GPU_Index");

    let reply = app.query(json!({"api_name": "index_basic"})).await;
    let codes = reply.column("index_code");
    assert_eq!(codes[0], "GPU_Index", "{}", reply.body);
    assert_eq!(reply.column("sort_no")[0], 1);
    assert_eq!(codes.len(), 7);
    let membership = app.membership().await;
    assert_eq!(
        membership.data()["indexes"][0],
        "GPU_Index",
        "{}",
        membership.body
    );
}

#[actix_web::test]
async fn a_private_index_disappears_from_index_basic_at_once() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    assert!(visitor_index_codes(&app)
        .await
        .contains(&json!("GPU_Index")));

    let patched = app
        .patch_index(&admin, "GPU_Index", json!({"visibility": "private"}))
        .await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["visibility"], "private");

    let codes = visitor_index_codes(&app).await;
    assert!(!codes.contains(&json!("GPU_Index")), "{codes:?}");
    assert_eq!(codes.len(), 6);
    // Not for a session either, not even the super administrator's.
    let reply = app
        .send_without_csrf(
            &admin,
            Method::POST,
            "/api/v1/query",
            Some(json!({"api_name": "index_basic"})),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert!(!reply.column("index_code").contains(&json!("GPU_Index")));
}

#[actix_web::test]
async fn index_settings_are_validated() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;

    let bad = app
        .patch_index(&admin, "GPU_Index", json!({"visibility": "secret"}))
        .await;
    bad.assert_error_mentioning(400, 40001, "visibility");

    let unknown_field = app
        .patch_index(&admin, "GPU_Index", json!({"colour": "red"}))
        .await;
    unknown_field.assert_error_mentioning(400, 40001, "colour");

    app.patch_index(&admin, "Nope_Index", json!({"sort_no": 1}))
        .await
        .assert_error(404, 40401);

    // GPU_Index is unchanged.
    let reply = app
        .query(json!({"api_name": "index_basic", "params": {"index_code": "GPU_Index"}}))
        .await;
    assert_eq!(
        reply.column("visibility"),
        [json!("index_only")],
        "{}",
        reply.body
    );
}

// ---------------------------------------------------------------------------------------

/// D6: at most 5 failed logins per user name per minute, even when they arrive at once
/// (the limit is the defence against password guessing; parallel guesses must not beat it).
#[actix_web::test]
async fn concurrent_failures_do_not_exceed_the_per_user_limit() {
    let (app, _) = spawn_app().await.with_member("alice", "free").await;
    let attempts = (0..20).map(|_| app.login("alice", "wrong password here"));
    let replies = futures_util::future::join_all(attempts).await;
    let codes: Vec<i64> = replies.iter().map(|(r, _)| r.code()).collect();
    let failures = codes.iter().filter(|c| **c == 40102).count();
    assert!(failures <= 5, "{failures} failures were checked: {codes:?}");
    // Every other attempt was turned away by the limit, not by some other failure.
    assert!(
        codes.iter().all(|c| *c == 40102 || *c == 42901),
        "{codes:?}"
    );
}

/// PostgreSQL text cannot hold NUL: such input is the client's mistake, never a 500.
#[actix_web::test]
async fn nul_characters_are_refused_as_bad_input() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let login = app
        .post_json(
            "/api/v1/auth/login",
            json!({"username": "ro\u{0}ot", "password": PASSWORD}),
        )
        .await;
    login.assert_error_mentioning(400, 40001, "username");
    let key = app
        .send_as(
            &admin,
            Method::POST,
            "/api/v1/keys",
            json!({"name": "a\u{0}b"}),
        )
        .await;
    key.assert_error(400, 40001);
    let delete = app
        .send_as(&admin, Method::DELETE, "/api/v1/keys/key_a%00b", json!({}))
        .await;
    delete.assert_error(404, 40401);
    let tier = app
        .send_as(
            &admin,
            Method::PUT,
            "/api/v1/admin/tiers/fr%00ee",
            free_defaults(),
        )
        .await;
    tier.assert_error(404, 40401);
}
