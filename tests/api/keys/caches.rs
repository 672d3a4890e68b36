//! The caches of keys and indexes: a change on one instance reaches the others' caches
//! within a second, and a cached key is verified with the database out of reach.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use super::daily;
use crate::helpers::{eventually, spawn_with_fixture, TestApp};

#[actix_web::test]
async fn a_change_on_one_instance_reaches_the_others_caches() {
    let a = spawn_with_fixture().await;
    let b = a.another_instance().await;
    let admin = a.admin().await;
    let alice = a.user(&admin, "alice", "free").await;
    let key = a.new_key(&alice, json!({"name": "k"})).await;
    // Both instances have the key cached.
    for app in [&a, &b] {
        assert_eq!(
            app.query_with(daily("GPU_Index"), Some(&key.key))
                .await
                .code(),
            0
        );
    }
    let path = format!("/api/v1/keys/{}", key.id);
    a.send_as(&alice, Method::DELETE, &path, json!({})).await;
    a.query_with(daily("GPU_Index"), Some(&key.key))
        .await
        .assert_error(401, 40102);
    let refused_on_b = eventually(Duration::from_secs(1), || async {
        b.query_with(daily("GPU_Index"), Some(&key.key))
            .await
            .code()
            == 40102
    })
    .await;
    assert!(refused_on_b, "instance b still accepts a deleted key");

    // Index settings (the dataset cache) travel the same way.
    assert!(visible(&b).await);
    let hide = json!({"visibility": "private"});
    let reply = a
        .send_as(
            &admin,
            Method::PATCH,
            "/api/v1/admin/indexes/GPU_Index",
            hide,
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert!(!visible(&a).await);
    assert!(eventually(Duration::from_secs(1), || async { !visible(&b).await }).await);
}

async fn visible(app: &TestApp) -> bool {
    let basic = app.query(json!({"api_name": "index_basic"})).await;
    basic.column("index_code").contains(&json!("GPU_Index"))
}

/// The hot path of a known key is memory only: with every database connection of the
/// service killed and new ones refused, a cached key and a cached page still answer.
#[actix_web::test]
async fn a_cached_key_is_verified_without_the_database() {
    let app = spawn_with_fixture().await;
    let key = app.member_key("petra", "pro").await;
    let body = daily("Server_Index");
    let warm = app.query_with(body.clone(), Some(&key.key)).await;
    assert_eq!(warm.code(), 0, "{}", warm.body);

    app.cut_database().await;
    let cached = app.query_with(body.clone(), Some(&key.key)).await;
    // Proof the database really is out of reach: an uncached query fails.
    let uncached = app.query_with(daily("SSD_Index"), Some(&key.key)).await;
    app.restore_database().await;
    assert_eq!(cached.code(), 0, "{}", cached.body);
    assert_eq!(cached.items(), warm.items());
    uncached.assert_error(500, 50000);
}
