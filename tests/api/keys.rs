//! API-key identity: every row of D3, the order of the check chain, what a key sees
//! (D4), changes taking effect on the next request, across instances too, and the
//! client address behind trusted proxies.

use std::time::Duration;

use chrono::TimeDelta;
use iq_actors::clock::Clock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    eventually, spawn_with, spawn_with_fixture, Key, Reply, Spawn, TestApp, FIXTURE,
};

fn daily(index_code: &str) -> Value {
    json!({"api_name": "index_daily", "params": {"index_code": index_code}})
}

async fn query_from(app: &TestApp, key: &str, forwarded_for: &str) -> Reply {
    let response = app
        .http
        .post(format!("{}/api/v1/query", app.address))
        .header("X-API-Key", key)
        .header("X-Forwarded-For", forwarded_for)
        .json(&daily("GPU_Index"))
        .send()
        .await
        .unwrap();
    TestApp::reply(response).await
}

#[actix_web::test]
async fn malformed_unknown_and_empty_keys_are_40102_and_never_fall_back_to_the_session() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
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
        .http
        .post(format!("{}/api/v1/query", app.address))
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
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;
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
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;
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
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    let user_path = format!("/api/v1/admin/users/{}", alice.user_id);
    let ok = || async { app.query_with(daily("GPU_Index"), Some(&key.key)).await };
    assert_eq!(ok().await.code(), 0);

    app.patch_key(&admin, &key, json!({"active": false})).await;
    ok().await.assert_error(403, 40301);
    app.patch_key(&admin, &key, json!({"active": true})).await;
    assert_eq!(ok().await.code(), 0);

    for change in [json!({"active": false}), json!({"api_access": false})] {
        let reply = app.send_as(&admin, Method::PATCH, &user_path, change).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        ok().await.assert_error(403, 40301);
        let undo = json!({"active": true, "api_access": true});
        app.send_as(&admin, Method::PATCH, &user_path, undo).await;
        assert_eq!(ok().await.code(), 0);
    }
}

#[actix_web::test]
async fn scopes_and_index_range_are_steps_5_and_6() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "alice", "free").await;
    app.patch_key(
        &admin,
        &key,
        json!({"scopes": ["index:read"], "index_codes": ["GPU_Index", "SSD_Index"]}),
    )
    .await;
    let quote = json!({"api_name": "index_quote", "params": {"index_code": "GPU_Index"}});
    app.query_with(quote, Some(&key.key))
        .await
        .assert_error(403, 40301);
    app.query_with(json!({"api_name": "trade_calendar"}), Some(&key.key))
        .await
        .assert_error(403, 40301);
    let outside = app.query_with(daily("Server_Index"), Some(&key.key)).await;
    outside.assert_error(403, 40302);
    assert!(outside.message().contains("Server_Index"));
    // Without index_code the range filters instead of refusing.
    let all = app
        .query_with(json!({"api_name": "index_daily"}), Some(&key.key))
        .await;
    let mut codes: Vec<String> = all
        .column("index_code")
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes, [json!("GPU_Index"), json!("SSD_Index")]);
    let basic = app
        .query_with(json!({"api_name": "index_basic"}), Some(&key.key))
        .await;
    assert_eq!(
        basic.column("index_code"),
        [json!("GPU_Index"), json!("SSD_Index")]
    );
}

#[actix_web::test]
async fn member_indexes_follow_the_owners_tier() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let free = app.key_of_tier(&admin, "freddy", "free").await;
    let pro = app.key_of_tier(&admin, "petra", "pro").await;
    // Step 8 comes after the range (step 6): a free key with the member index in range.
    app.patch_key(
        &admin,
        &free,
        json!({"index_codes": ["Hardware_Index", "GPU_Index"]}),
    )
    .await;
    app.query_with(daily("Hardware_Index"), Some(&free.key))
        .await
        .assert_error(403, 40301);
    let all = app
        .query_with(json!({"api_name": "index_daily"}), Some(&free.key))
        .await;
    assert!(all.column("index_code").iter().all(|c| c == "GPU_Index"));
    let pro_rows = app
        .query_with(daily("Hardware_Index"), Some(&pro.key))
        .await;
    assert_eq!(
        pro_rows.column("trade_date"),
        [json!("20261109"), json!("20261110")]
    );
}

#[actix_web::test]
async fn a_key_sees_every_field_and_its_tiers_delay() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let free = app.key_of_tier(&admin, "freddy", "free").await;
    let pro = app.key_of_tier(&admin, "petra", "pro").await;

    // An index_only index: the visitor gets no weighted price and no quotes; a key does.
    let visitor = app.query(daily("GPU_Index")).await;
    assert!(visitor.column("weighted_price").iter().all(Value::is_null));
    let keyed = app.query_with(daily("GPU_Index"), Some(&free.key)).await;
    assert_eq!(
        keyed.column("weighted_price"),
        [json!("30000.000000"), json!("29700.000000")]
    );
    let quote = json!({"api_name": "index_quote", "params": {"index_code": "GPU_Index"}});
    app.query(quote.clone()).await.assert_error(403, 40301);
    let quotes = app.query_with(quote, Some(&free.key)).await;
    assert_eq!(quotes.column("specification"), [json!("H100 SXM5 80GB")]);

    // Delay: the free tier stops at 10 Nov; the professional tier sees 11 Nov too.
    let server = daily("Server_Index");
    let free_dates = app.query_with(server.clone(), Some(&free.key)).await;
    assert_eq!(
        free_dates.column("trade_date"),
        [json!("20261109"), json!("20261110")]
    );
    let pro_dates = app.query_with(server, Some(&pro.key)).await;
    assert_eq!(pro_dates.column("trade_date").len(), 3);
}

/// A request failing two steps gets the earlier step's error (spec part 5, D1).
#[actix_web::test]
async fn the_earlier_step_wins() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    let bad_body = json!({"api_name": "index_daily", "params": {"colour": "red"}});
    let user_path = format!("/api/v1/admin/users/{}", alice.user_id);

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
    app.send_as(&admin, Method::PATCH, &user_path, json!({"active": false}))
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

async fn pro_key_with_allowlist(app: &TestApp) -> Key {
    let admin = app.admin().await;
    let petra = app.user(&admin, "petra", "pro").await;
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
    let app = spawn_with(Spawn {
        setup_sql: FIXTURE,
        trusted_proxies: &["127.0.0.1/32"],
        ..Spawn::default()
    })
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

#[actix_web::test]
async fn a_session_cookie_gives_the_accounts_tier_and_a_stale_one_the_visitor() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let petra = app.user(&admin, "petra", "pro").await;
    let as_petra = |body: Value| {
        let app = &app;
        let petra = petra.clone();
        async move {
            app.call(
                Method::POST,
                "/api/v1/query",
                Some(body),
                Some(&petra),
                false,
            )
            .await
        }
    };
    // Professional session: the member index and no delay, but website field rules.
    let member = as_petra(daily("Hardware_Index")).await;
    assert_eq!(member.column("trade_date").len(), 2, "{}", member.body);
    let gpu = as_petra(daily("GPU_Index")).await;
    assert!(gpu.column("weighted_price").iter().all(Value::is_null));
    let server = as_petra(daily("Server_Index")).await;
    assert_eq!(server.column("trade_date").len(), 3);

    // A logged-out cookie is simply the visitor on the query path.
    app.send_as(&petra, Method::POST, "/api/v1/auth/logout", json!({}))
        .await;
    as_petra(daily("Hardware_Index"))
        .await
        .assert_error(403, 40301);
    let visitor = as_petra(daily("Server_Index")).await;
    assert_eq!(visitor.column("trade_date").len(), 2);
}

/// The hot path of a known key is memory only: with every database connection of the
/// service killed and new ones refused, a cached key and a cached page still answer.
#[actix_web::test]
async fn a_cached_key_is_verified_without_the_database() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "petra", "pro").await;
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
