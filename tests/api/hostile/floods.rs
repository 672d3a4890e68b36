//! Floods of calls: keyless callers held to a limit a minute (D15), a flood of setup
//! calls after initialisation answered at once, and setup before it limited per address.

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::json;

use super::still_serving;
use crate::helpers::{spawn_app, spawn_with, spawn_with_demo, Spawn, TestApp, PASSWORD};

#[actix_web::test]
async fn keyless_callers_are_limited_per_minute_d15() {
    let app = spawn_with(Spawn::demo().tuned(|s| s.site.website_per_minute = 3)).await;
    let body = json!({"api_name": "index_basic"});
    for _ in 0..3 {
        assert_eq!(app.query(body.clone()).await.code(), 0);
    }
    let refused = app.query(body.clone()).await;
    refused.assert_error(429, 42901);
    let retry: i64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // A session has its own window; config and membership are not limited.
    let admin = app.admin().await;
    let as_session = app
        .send_without_csrf(&admin, Method::POST, "/api/v1/query", Some(body.clone()))
        .await;
    assert_eq!(as_session.code(), 0, "{}", as_session.body);
    assert_eq!(app.config().await.code(), 0);
    assert_eq!(app.membership().await.code(), 0);
    // Key callers are held to their quota, not to this.
    let key = app.key_of_tier(&admin, "kai", "pro").await;
    assert_eq!(app.query_with(body.clone(), Some(&key.key)).await.code(), 0);
    // The next calendar minute starts afresh.
    app.clock.advance(chrono::Duration::seconds(60));
    assert_eq!(app.query(body).await.code(), 0);
}

#[actix_web::test]
async fn a_setup_flood_after_initialisation_is_answered_at_once() {
    let app = spawn_with_demo().await;
    app.admin().await;
    let setup = |i: usize| {
        let request = app
            .request(Method::POST, "/api/v1/setup")
            .json(&json!({"username": format!("intruder{i}"), "password": PASSWORD}));
        async move { TestApp::reply(request.send().await.unwrap()).await }
    };
    let flood = join_all((0..300).map(setup));
    let (answers, query) = tokio::join!(flood, async {
        app.query(json!({"api_name": "index_latest"})).await
    });
    for answer in answers {
        answer.assert_error(409, 40901);
    }
    assert_eq!(query.code(), 0, "{}", query.body);
    still_serving(&app).await;
}

#[actix_web::test]
async fn setup_before_initialisation_is_limited_per_address() {
    let app = spawn_app().await;
    let mut codes = Vec::new();
    for _ in 0..12 {
        // A password below the policy: refused without hashing, still counted.
        let reply = app
            .call(
                Method::POST,
                "/api/v1/setup",
                Some(json!({"username": "root", "password": "short"})),
                None,
                false,
            )
            .await;
        codes.push(reply.code());
    }
    assert_eq!(codes[..10], [40001; 10]);
    assert_eq!(codes[10..], [42901; 2]);
}
