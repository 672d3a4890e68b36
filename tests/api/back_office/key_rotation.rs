//! An owner's key care: a new secret for a key (rotation), a new name, the key's usage.

use std::time::Duration as StdDuration;

use super::*;
use crate::helpers::{eventually, Key, Reply};

fn daily(code: &str) -> Value {
    json!({"api_name": "index_daily", "params": {"index_code": code}})
}

/// A professional member's key reading `Server_Index` only, with its own settings.
async fn ranged_key(app: &TestApp, admin: &Session, owner: &Session) -> Key {
    let key = app
        .new_key(
            owner,
            json!({"name": "desk", "index_codes": ["Server_Index"],
                   "expires_at": "2027-06-30T00:00:00Z"}),
        )
        .await;
    app.patch_key(admin, &key, json!({"per_minute": 50, "per_day": 500}))
        .await;
    key
}

/// Carol, a free member, with her key "laptop", and Dave, a pro member, with his key
/// "dave's" (someone else's key to her), each signed in.
async fn carol_and_dave(app: &TestApp) -> ((Session, Key), (Session, Key)) {
    let carol = app.member("carol", "free").await;
    let dave = app.member("dave", "pro").await;
    let carols = app.new_key(&carol, json!({"name": "laptop"})).await;
    let daves = app.new_key(&dave, json!({"name": "dave's"})).await;
    ((carol, carols), (dave, daves))
}

/// The metadata of a key answer, without what a rotation is meant to change.
fn settings(data: &Value) -> Value {
    let mut data = data.clone();
    let object = data.as_object_mut().unwrap();
    object.remove("key");
    object.remove("key_hint");
    object.remove("calls_today");
    data
}

#[actix_web::test]
async fn a_rotated_key_refuses_the_old_secret_at_once_and_keeps_its_settings() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let dave = app.user(&admin, "dave", "pro").await;
    let old = ranged_key(&app, &admin, &dave).await;
    // The old secret is in this instance's key cache.
    assert_eq!(
        app.query_with(daily("Server_Index"), Some(&old.key))
            .await
            .code(),
        0
    );
    let before = app.list_keys(&dave).await.data()[0].clone();

    let rotated = app.rotate_key(&dave, &old.id).await;
    assert_eq!(
        (rotated.status, rotated.code()),
        (200, 0),
        "{}",
        rotated.body
    );
    assert_eq!(rotated.header("cache-control"), Some("no-store"));
    let data = rotated.data();
    let new_key = data["key"].as_str().expect("the new key").to_string();
    assert!(iq_actors::accounts::api_key::is_well_formed(&new_key));
    assert_ne!(new_key, old.key);
    assert!(new_key.starts_with(data["key_hint"].as_str().unwrap()));
    // Same record: id, name, scopes, range, expiry, limits, state, creation time.
    assert_eq!(data["id"], old.id.as_str());
    assert_eq!(settings(data), settings(&before), "{data}");
    assert_eq!(data["index_codes"], json!(["Server_Index"]));
    assert_eq!(
        (&data["per_minute"], &data["per_day"]),
        (&json!(50), &json!(500))
    );

    // The old secret is refused at once, as an unknown key; the new one works, with the
    // same index range.
    app.query_with(daily("Server_Index"), Some(&old.key))
        .await
        .assert_error(401, 40102);
    let served = app.query_with(daily("Server_Index"), Some(&new_key)).await;
    assert_eq!(served.code(), 0, "{}", served.body);
    app.query_with(daily("GPU_Index"), Some(&new_key))
        .await
        .assert_error(403, 40302);
    // Listed with the new hint, never the key.
    let listed = app.list_keys(&dave).await;
    assert_eq!(listed.data()[0]["key_hint"], data["key_hint"]);
    assert!(!listed.body.to_string().contains(&new_key));

    // The usage of the key carries on across the rotation (same id, same windows): the
    // call before it and the one after (a refused call is not counted).
    let counted = eventually(StdDuration::from_secs(5), || async {
        let usage = app.own_key_usage(&dave, &old.id, "days=1").await;
        usage.data()["days"][0]["calls"] == 2
    })
    .await;
    assert!(
        counted,
        "the calls before and after the rotation are one key's"
    );
}

#[actix_web::test]
async fn a_rotation_reaches_every_instance() {
    let first = spawn_with_fixture().await;
    let second = first.another_instance().await;
    let admin = first.admin().await;
    let dave = first.user(&admin, "dave", "pro").await;
    let old = ranged_key(&first, &admin, &dave).await;
    // Both instances hold the old secret in their caches.
    for app in [&first, &second] {
        let reply = app.query_with(daily("Server_Index"), Some(&old.key)).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }

    let rotated = first.rotate_key(&dave, &old.id).await;
    assert_eq!(rotated.code(), 0, "{}", rotated.body);
    let new_key = rotated.data()["key"].as_str().unwrap().to_string();
    first
        .query_with(daily("Server_Index"), Some(&old.key))
        .await
        .assert_error(401, 40102);
    let refused = eventually(StdDuration::from_secs(5), || async {
        let reply = second
            .query_with(daily("Server_Index"), Some(&old.key))
            .await;
        (reply.status, reply.code()) == (401, 40102)
    })
    .await;
    assert!(refused, "the other instance kept accepting the old secret");
    let served = second
        .query_with(daily("Server_Index"), Some(&new_key))
        .await;
    assert_eq!(served.code(), 0, "{}", served.body);
    second
        .query_with(daily("GPU_Index"), Some(&new_key))
        .await
        .assert_error(403, 40302);
}

#[actix_web::test]
async fn only_the_owner_rotates_with_the_csrf_token() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let ((carol, carols), (_, daves)) = carol_and_dave(&app).await;

    // Someone else's key is "not found", as an unknown one: ids cannot be probed. The
    // super administrator is no owner either.
    app.rotate_key(&carol, &daves.id)
        .await
        .assert_error(404, 40401);
    app.rotate_key(&admin, &daves.id)
        .await
        .assert_error(404, 40401);
    app.rotate_key(&carol, "key_doesnotexist00")
        .await
        .assert_error(404, 40401);
    let path = format!("/api/v1/keys/{}/rotate", carols.id);
    app.call(Method::POST, &path, None, Some(&carol), false)
        .await
        .assert_error(403, 40301);
    app.call(Method::POST, &path, None, None, false)
        .await
        .assert_error(401, 40101);
    // None of it touched the keys.
    for key in [&daves, &carols] {
        let reply = app
            .query_with(json!({"api_name": "trade_calendar"}), Some(&key.key))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
    // A deleted key cannot be rotated back to life.
    assert_eq!(app.delete_key(&carol, &carols.id).await.code(), 0);
    app.rotate_key(&carol, &carols.id)
        .await
        .assert_error(404, 40401);
}

#[actix_web::test]
async fn renaming_a_key_checks_the_name_owner_and_token() {
    let app = spawn_app().await;
    let ((carol, key), (dave, daves)) = carol_and_dave(&app).await;

    let renamed = app
        .rename_key(&carol, &key.id, json!({"name": "  work laptop  "}))
        .await;
    assert_eq!(renamed.code(), 0, "{}", renamed.body);
    assert_eq!(renamed.data()["name"], "work laptop");
    assert_eq!(renamed.data()["id"], key.id.as_str());
    assert!(renamed.data().get("key").is_none());
    assert_eq!(app.list_keys(&carol).await.data()[0]["name"], "work laptop");
    let longest = "é".repeat(100);
    let renamed = app
        .rename_key(&carol, &key.id, json!({"name": longest}))
        .await;
    assert_eq!(renamed.data()["name"], longest.as_str(), "{}", renamed.body);

    for bad in [
        json!({"name": ""}),
        json!({"name": "   "}),
        json!({"name": "x".repeat(101)}),
        json!({"name": "two\nlines"}),
        json!({"name": "tab\there"}),
        json!({"name": "escape\u{1b}[31m"}),
        json!({"name": 5}),
        json!({}),
        json!({"name": "ok", "scopes": ["index:read"]}),
    ] {
        let reply = app.rename_key(&carol, &key.id, bad.clone()).await;
        reply.assert_error(400, 40001);
        assert!(
            reply.message().contains("name") || reply.message().contains("scopes"),
            "{bad}"
        );
    }
    assert_eq!(
        app.list_keys(&carol).await.data()[0]["name"],
        longest.as_str()
    );

    // Creation refuses what renaming refuses.
    let created = app.create_key(&dave, json!({"name": "two\nlines"})).await;
    created.assert_error(400, 40001);

    app.rename_key(&carol, &daves.id, json!({"name": "mine now"}))
        .await
        .assert_error(404, 40401);
    assert_eq!(app.list_keys(&dave).await.data()[0]["name"], "dave's");
    let path = format!("/api/v1/keys/{}", key.id);
    app.send_without_csrf(&carol, Method::PATCH, &path, Some(json!({"name": "x"})))
        .await
        .assert_error(403, 40301);
    app.call(
        Method::PATCH,
        &path,
        Some(json!({"name": "x"})),
        None,
        false,
    )
    .await
    .assert_error(401, 40101);
}

/// `days` of a usage answer as (date, calls).
fn days_of(reply: &Reply) -> Vec<(String, i64)> {
    reply.data()["days"]
        .as_array()
        .unwrap_or_else(|| panic!("days: {}", reply.body))
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap().into(),
                d["calls"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn an_owner_reads_the_usage_of_their_own_keys() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let ((carol, key), (_, daves)) = carol_and_dave(&app).await;
    for _ in 0..2 {
        let reply = app
            .query_with(json!({"api_name": "trade_calendar"}), Some(&key.key))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }

    let counted = eventually(StdDuration::from_secs(5), || async {
        let reply = app.own_key_usage(&carol, &key.id, "days=3").await;
        reply.code() == 0 && days_of(&reply).first().is_some_and(|d| d.1 == 2)
    })
    .await;
    assert!(counted, "the calls never showed");
    let usage = app.own_key_usage(&carol, &key.id, "days=3").await;
    assert_eq!(
        days_of(&usage),
        [
            ("20261120".into(), 2),
            ("20261119".into(), 0),
            ("20261118".into(), 0)
        ]
    );
    let data = usage.data();
    assert_eq!(data["key_id"], key.id.as_str());
    assert_eq!(
        (&data["per_minute"], &data["per_day"]),
        (&json!(10), &json!(10))
    );
    // The same answer as the administrators' endpoint.
    let admins = app.admin_key_usage(&admin, &key.id, "days=3").await;
    assert_eq!(admins.data(), usage.data());
    // Thirty days by default, 1 and 366 at the ends.
    assert_eq!(
        days_of(&app.own_key_usage(&carol, &key.id, "").await).len(),
        30
    );
    assert_eq!(
        days_of(&app.own_key_usage(&carol, &key.id, "days=1").await).len(),
        1
    );
    assert_eq!(
        days_of(&app.own_key_usage(&carol, &key.id, "days=366").await).len(),
        366
    );

    for bad in [
        "days=0",
        "days=367",
        "days=-1",
        "days=two",
        "days=1&days=2",
        "from=1",
    ] {
        app.own_key_usage(&carol, &key.id, bad)
            .await
            .assert_error(400, 40001);
    }
    // Someone else's key, an unknown or a deleted one: not found.
    app.own_key_usage(&carol, &daves.id, "")
        .await
        .assert_error(404, 40401);
    app.own_key_usage(&admin, &key.id, "")
        .await
        .assert_error(404, 40401);
    app.own_key_usage(&carol, "key_doesnotexist00", "")
        .await
        .assert_error(404, 40401);
    app.get(&format!("/api/v1/keys/{}/usage", key.id))
        .await
        .assert_error(401, 40101);
    assert_eq!(app.delete_key(&carol, &key.id).await.code(), 0);
    app.own_key_usage(&carol, &key.id, "")
        .await
        .assert_error(404, 40401);
}
