//! The client address a key's allow-list sees: the peer, whatever `X-Forwarded-For`
//! says, unless the peer is a trusted proxy, whose forwarded client then counts.

use reqwest::Method;
use serde_json::json;

use super::daily;
use crate::helpers::{spawn_with, spawn_with_fixture, Key, Reply, Spawn, TestApp, FIXTURE};

async fn query_from(app: &TestApp, key: &str, forwarded_for: &str) -> Reply {
    let response = app
        .request(Method::POST, "/api/v1/query")
        .header("X-API-Key", key)
        .header("X-Forwarded-For", forwarded_for)
        .json(&daily("GPU_Index"))
        .send()
        .await
        .unwrap();
    TestApp::reply(response).await
}

async fn pro_key_with_allowlist(app: &TestApp) -> Key {
    let petra = app.member("petra", "pro").await;
    app.new_key(
        &petra,
        json!({"name": "office", "ip_allowlist": ["203.0.113.0/24"]}),
    )
    .await
}

#[actix_web::test]
async fn without_trusted_proxies_the_allowlist_sees_the_peer_and_ignores_forwarded_for() {
    let app = spawn_with_fixture().await;
    let key = pro_key_with_allowlist(&app).await;
    // The peer is 127.0.0.1; a forged header must not help.
    query_from(&app, &key.key, "203.0.113.5")
        .await
        .assert_error(403, 40301);
    app.query_with(daily("GPU_Index"), Some(&key.key))
        .await
        .assert_error(403, 40301);
}

#[actix_web::test]
async fn behind_a_trusted_proxy_the_allowlist_sees_the_forwarded_client() {
    let app = spawn_with(
        Spawn::sql(FIXTURE)
            .tuned(|s| s.http.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()]),
    )
    .await;
    let key = pro_key_with_allowlist(&app).await;
    assert_eq!(query_from(&app, &key.key, "203.0.113.5").await.code(), 0);
    query_from(&app, &key.key, "198.51.100.1")
        .await
        .assert_error(403, 40301);
    // A client-written entry left of the proxy's does not count.
    query_from(&app, &key.key, "203.0.113.5, 198.51.100.1")
        .await
        .assert_error(403, 40301);
}
