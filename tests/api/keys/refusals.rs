//! The refusals of D3: a malformed, unknown or empty key (never rescued by a session), a
//! deleted or expired key, a disabled key or owner and its undoing; and, when a request
//! fails two steps, the earlier step's error.

use chrono::TimeDelta;
use iq_actors::clock::Clock;
use reqwest::Method;
use serde_json::json;

use super::daily;
use crate::helpers::spawn_with_fixture;

#[actix_web::test]
async fn malformed_unknown_and_empty_keys_are_40102_and_never_fall_back_to_the_session() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let real = app.key_of_tier(&admin, "alice", "free").await;
    let mut typo = real.key.clone().into_bytes();
    typo[20] = if typo[20] == b'x' { b'y' } else { b'x' };
    let typo = String::from_utf8(typo).unwrap();
    let unknown = iq_actors::accounts::api_key::generate().text;
    for key in ["", "not a key", "iq_", &typo, &unknown] {
        let reply = app.query_with(daily("GPU_Index"), Some(key)).await;
        reply.assert_error(401, 40102);
    }
    // A valid session cookie does not rescue a bad key header (spec part 5, rule 2).
    let response = app
        .request(Method::POST, "/api/v1/query")
        .header("X-API-Key", &unknown)
        .header("Cookie", &admin.cookie)
        .json(&daily("GPU_Index"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    // The real key works.
    let ok = app.query_with(daily("GPU_Index"), Some(&real.key)).await;
    assert_eq!(ok.code(), 0, "{}", ok.body);
}

#[actix_web::test]
async fn a_deleted_key_is_refused_on_its_next_use() {
    let app = spawn_with_fixture().await;
    let alice = app.member("alice", "free").await;
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    assert_eq!(
        app.query_with(daily("GPU_Index"), Some(&key.key))
            .await
            .code(),
        0
    );
    let path = format!("/api/v1/keys/{}", key.id);
    let deleted = app.send_as(&alice, Method::DELETE, &path, json!({})).await;
    assert_eq!(deleted.code(), 0, "{}", deleted.body);
    app.query_with(daily("GPU_Index"), Some(&key.key))
        .await
        .assert_error(401, 40102);
}

#[actix_web::test]
async fn an_expired_key_is_40103_from_the_moment_it_expires() {
    let app = spawn_with_fixture().await;
    let alice = app.member("alice", "free").await;
    let expires = app.clock.now() + TimeDelta::hours(1);
    let key = app
        .new_key(
            &alice,
            json!({"name": "k", "expires_at": expires.to_rfc3339()}),
        )
        .await;
    assert_eq!(
        app.query_with(daily("GPU_Index"), Some(&key.key))
            .await
            .code(),
        0
    );
    app.clock.advance(TimeDelta::hours(1));
    app.query_with(daily("GPU_Index"), Some(&key.key))
        .await
        .assert_error(401, 40103);
    // The session idled out meanwhile; a fresh one lists the key as expired.
    let alice = app.login_ok("alice").await;
    let listed = app.get_as(&alice, "/api/v1/keys").await;
    assert_eq!(listed.data()[0]["state"], "expired");
}

#[actix_web::test]
async fn disabling_a_key_or_its_owner_is_40301_at_once_and_undoing_it_restores_access() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let alice = app.user(&admin, "alice", "free").await;
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    let ok = || async { app.query_with(daily("GPU_Index"), Some(&key.key)).await };
    assert_eq!(ok().await.code(), 0);

    app.patch_key(&admin, &key, json!({"active": false})).await;
    ok().await.assert_error(403, 40301);
    app.patch_key(&admin, &key, json!({"active": true})).await;
    assert_eq!(ok().await.code(), 0);

    for change in [json!({"active": false}), json!({"api_access": false})] {
        let reply = app.patch_user(&admin, &alice.user_id, change).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        ok().await.assert_error(403, 40301);
        let undo = json!({"active": true, "api_access": true});
        app.patch_user(&admin, &alice.user_id, undo).await;
        assert_eq!(ok().await.code(), 0);
    }
}

/// A request failing two steps gets the earlier step's error (spec part 5, D1).
#[actix_web::test]
async fn the_earlier_step_wins() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let alice = app.user(&admin, "alice", "free").await;
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    let bad_body = json!({"api_name": "index_daily", "params": {"colour": "red"}});

    // Step 1 before body validation.
    app.query_with(bad_body.clone(), Some("iq_bad"))
        .await
        .assert_error(401, 40102);
    // Step 6 (range) after body validation; step 6 before step 8 (member index).
    app.patch_key(&admin, &key, json!({"index_codes": ["GPU_Index"]}))
        .await;
    app.query_with(bad_body.clone(), Some(&key.key))
        .await
        .assert_error(400, 40001);
    app.query_with(daily("Hardware_Index"), Some(&key.key))
        .await
        .assert_error(403, 40302);
    // Step 5 (scope, 40301) before step 6 (range, 40302).
    app.patch_key(&admin, &key, json!({"scopes": ["calendar:read"]}))
        .await;
    app.query_with(daily("SSD_Index"), Some(&key.key))
        .await
        .assert_error(403, 40301);
    // Step 3 (owner disabled, 40301) before body validation.
    app.patch_user(&admin, &alice.user_id, json!({"active": false}))
        .await;
    app.query_with(bad_body.clone(), Some(&key.key))
        .await
        .assert_error(403, 40301);
    // Step 2 (expired, 40103) before step 3 (owner disabled).
    let soon = app.clock.now() + TimeDelta::minutes(5);
    app.patch_key(&admin, &key, json!({"expires_at": soon.to_rfc3339()}))
        .await;
    app.clock.advance(TimeDelta::minutes(5));
    app.query_with(bad_body, Some(&key.key))
        .await
        .assert_error(401, 40103);
}
