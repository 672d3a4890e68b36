//! What counts against a quota: only calls that pass steps 1 to 6, never the website's
//! identities nor a 429; and the usage counted, in the owner's key list and to
//! administrators.

use reqwest::Method;
use serde_json::json;

use super::{call, daily, latest};
use crate::helpers::{spawn_with_fixture, Session, TestApp};

/// `calls_today` of the owner's only key, once the instance has flushed `expected`.
async fn calls_today(app: &TestApp, owner: &Session, expected: i64) -> i64 {
    let mut seen = -1;
    for _ in 0..200 {
        let list = app.get_as(owner, "/api/v1/keys").await;
        seen = list.data()[0]["calls_today"].as_i64().expect("calls_today");
        if seen == expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    seen
}

#[actix_web::test]
async fn only_calls_that_pass_steps_1_to_6_count() {
    let (app, owner) = spawn_with_fixture().await.with_member("olga", "free").await;
    let key = app
        .key_for_indexes(&owner, "narrow", &["Server_Index"])
        .await;

    // Refused before step 7: not counted, but reported with the headers (D6).
    let invalid = app
        .query_with(json!({"api_name": "no_such_dataset"}), Some(&key.key))
        .await;
    invalid.assert_error(400, 40001);
    assert_eq!(invalid.rate_remaining(), 10);
    let out_of_range = app.query_with(daily("SSD_Index"), Some(&key.key)).await;
    out_of_range.assert_error(403, 40302);
    assert_eq!(out_of_range.rate_remaining(), 10);
    // Not key-authenticated: no headers, nothing counted.
    // One character changed (a key that ends in `x` gets a `y`: never the key itself).
    let (head, last) = key.key.split_at(key.key.len() - 1);
    let mistyped = format!("{head}{}", if last == "x" { "y" } else { "x" });
    let unknown = app.query_with(latest(), Some(&mistyped)).await;
    assert_eq!(unknown.status, 401, "{}", unknown.body);
    assert!(unknown.header("x-ratelimit-limit").is_none());
    // Website identity, /config and /membership never count.
    let session = app.get_as(&owner, "/api/v1/membership").await;
    assert_eq!(session.code(), 0);
    assert_eq!(app.config().await.code(), 0);
    let as_member = app
        .send_without_csrf(&owner, Method::POST, "/api/v1/query", Some(latest()))
        .await;
    assert_eq!(as_member.code(), 0, "{}", as_member.body);

    for n in 1..=10 {
        let reply = app.query_with(daily("Server_Index"), Some(&key.key)).await;
        assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
    }
    // A 429 is not counted either.
    call(&app, &key).await.assert_error(429, 42902);
    call(&app, &key).await.assert_error(429, 42902);
    assert_eq!(calls_today(&app, &owner, 10).await, 10);
}

#[actix_web::test]
async fn usage_shows_in_the_key_list_and_to_admins() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let owner = app.user(&admin, "uma", "pro").await;
    let key = app.new_key(&owner, json!({"name": "main"})).await;
    for _ in 0..3 {
        assert_eq!(call(&app, &key).await.code(), 0);
    }
    assert_eq!(calls_today(&app, &owner, 3).await, 3);

    let path = format!("/api/v1/admin/keys/{}/usage?days=3", key.id);
    let usage = app.get_as(&admin, &path).await;
    assert_eq!(usage.code(), 0, "{}", usage.body);
    let data = usage.data();
    assert_eq!(data["key_id"], key.id.as_str());
    assert_eq!(data["owner"], owner.user_id.as_str());
    assert_eq!(
        (data["per_minute"].as_i64(), data["per_day"].as_i64()),
        (Some(10_000), Some(10_000))
    );
    assert_eq!(
        data["days"],
        json!([{"date": "20261120", "calls": 3}, {"date": "20261119", "calls": 0},
               {"date": "20261118", "calls": 0}])
    );

    app.get_as(&owner, &path).await.assert_error(403, 40301);
    app.get_as(&admin, "/api/v1/admin/keys/key_nope/usage")
        .await
        .assert_error(404, 40401);
    for bad in ["days=0", "days=367", "days=x", "from=1"] {
        let path = format!("/api/v1/admin/keys/{}/usage?{bad}", key.id);
        app.get_as(&admin, &path).await.assert_error(400, 40001);
    }
}
