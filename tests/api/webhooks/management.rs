//! The webhook API: the secret shown once, the tier's limit, someone else's endpoint is
//! 404, bad bodies are 40001, changes need the CSRF token, and destinations follow the
//! rules (a private address refused without `WEBHOOK_ALLOW_PRIVATE`, no redirect
//! followed, a KiB of an answer kept); administrators see every account's endpoints.

use std::time::Duration;

use serde_json::json;

use super::receiver::Receiver;
use crate::helpers::{select_value, spawn_app, spawn_with, Session, Spawn, TestApp};

/// An endpoint of `member` at `receiver` for `index.published`, sent its test event and
/// the receiver reached: the endpoint's id.
async fn endpoint_tested_once(app: &TestApp, member: &Session, receiver: &Receiver) -> String {
    let hook = app
        .new_webhook(member, &receiver.url, &["index.published"])
        .await;
    let id = hook["id"].as_str().unwrap().to_owned();
    app.test_webhook(member, &id).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    id
}

#[actix_web::test]
async fn the_secret_is_shown_once_and_the_tier_limits_the_count() {
    let (app, free) = spawn_app().await.with_member("fay", "free").await;
    let hook = app
        .new_webhook(&free, "https://hooks.example.com/iq", &["index.published"])
        .await;
    assert!(
        hook["secret"].as_str().unwrap().starts_with("whsec_"),
        "{hook}"
    );
    assert!(hook["id"].as_str().unwrap().starts_with("wh_"), "{hook}");
    let list = app.webhooks(&free).await;
    assert_eq!(list.code(), 0, "{}", list.body);
    assert!(!list.body.to_string().contains("whsec_"), "{}", list.body);
    assert_eq!(list.data()[0]["events"], json!(["index.published"]));
    // The free tier holds one.
    let second = app
        .create_webhook(
            &free,
            json!({"url": "https://b.example.com/", "events": ["index.revised"]}),
        )
        .await;
    second.assert_error(409, 40901);

    // The super administrator raises the free tier's allowance (the other settings as
    // they were): a second fits, a third does not.
    let admin = app.admin().await;
    let mut tier = app.tier(&admin, "free").await;
    assert_eq!(tier["max_webhooks"], 1, "{tier}");
    let settings = tier.as_object_mut().unwrap();
    settings.remove("tier");
    settings.insert("max_webhooks".into(), json!(2));
    let put = app.put_tier(&admin, "free", tier).await;
    assert_eq!(put.data()["max_webhooks"], 2, "{}", put.body);
    app.new_webhook(&free, "https://b.example.com/", &["index.revised"])
        .await;
    app.create_webhook(
        &free,
        json!({"url": "https://c.example.com/", "events": ["index.revised"]}),
    )
    .await
    .assert_error(409, 40901);
}

#[actix_web::test]
async fn someone_elses_endpoint_is_not_found() {
    let (app, owner) = spawn_app().await.with_member("olga", "pro").await;
    let other = app.member("oscar", "pro").await;
    let hook = app
        .new_webhook(&owner, "https://hooks.example.com/iq", &["index.published"])
        .await;
    let id = hook["id"].as_str().unwrap();
    app.test_webhook(&other, id).await.assert_error(404, 40401);
    app.webhook_deliveries(&other, id)
        .await
        .assert_error(404, 40401);
    app.delete_webhook(&other, id)
        .await
        .assert_error(404, 40401);
    app.delete_webhook(&owner, "wh_x")
        .await
        .assert_error(404, 40401);
    let deleted = app.delete_webhook(&owner, id).await;
    assert_eq!(deleted.data()["deleted"], id, "{}", deleted.body);
    app.delete_webhook(&owner, id)
        .await
        .assert_error(404, 40401);
}

#[actix_web::test]
async fn bad_bodies_are_40001_and_changes_need_the_csrf_token() {
    let (app, member) = spawn_app().await.with_member("bea", "pro").await;
    for (body, names) in [
        (json!({"url": "https://a.example.com/"}), "events"),
        (
            json!({"url": "https://a.example.com/", "events": []}),
            "events",
        ),
        (
            json!({"url": "https://a.example.com/", "events": ["index.deleted"]}),
            "events",
        ),
        (
            json!({"url": "not a url", "events": ["index.revised"]}),
            "url",
        ),
        (
            json!({"url": "ftp://a.example.com/", "events": ["index.revised"]}),
            "url",
        ),
        (
            json!({"url": "https://a.example.com/", "events": ["index.revised"], "secret": "x"}),
            "secret",
        ),
        (json!({"url": 5, "events": ["index.revised"]}), "url"),
    ] {
        app.create_webhook(&member, body)
            .await
            .assert_error_mentioning(400, 40001, names);
    }
    let no_csrf = app
        .call(
            reqwest::Method::POST,
            "/api/v1/webhooks",
            Some(json!({"url": "https://a.example.com/", "events": ["index.revised"]})),
            Some(&member),
            false,
        )
        .await;
    no_csrf.assert_error(403, 40301);
    app.get("/api/v1/webhooks").await.assert_error(401, 40101);
}

#[actix_web::test]
async fn a_private_address_is_refused_without_allow_private() {
    let app = spawn_with(
        Spawn::default().tuned(|settings| settings.webhooks.webhook_allow_private = false),
    )
    .await;
    let member = app.member("pia", "pro").await;
    let receiver = Receiver::start();
    for url in [
        receiver.url.clone(),
        receiver.url.replace("http://", "https://"),
        "https://10.1.2.3/hook".to_string(),
        "https://[::1]/hook".to_string(),
        // Outside IPv6's global unicast space (D27): IPv4-compatible, translated,
        // site-local.
        "https://[::127.0.0.1]/hook".to_string(),
        "https://[::ffff:0:7f00:1]/hook".to_string(),
        "https://[fec0::1]/hook".to_string(),
        // 420 characters as typed, over 2,048 once percent-encoded as stored (D27).
        format!("https://hooks.example.com/{}", "é".repeat(400)),
    ] {
        app.create_webhook(&member, json!({"url": url, "events": ["index.published"]}))
            .await
            .assert_error_mentioning(400, 40001, "url");
    }
    // The refusal says which setting a private network's receiver needs.
    app.create_webhook(
        &member,
        json!({"url": "https://10.1.2.3/hook", "events": ["index.published"]}),
    )
    .await
    .assert_error_mentioning(400, 40001, "WEBHOOK_ALLOW_PRIVATE=1");
    // A name is checked where it connects: `localhost` resolves to loopback only.
    let port = receiver
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let hook = app
        .new_webhook(
            &member,
            &format!("https://localhost:{port}/hook"),
            &["index.published"],
        )
        .await;
    let id = hook["id"].as_str().unwrap();
    assert_eq!(app.test_webhook(&member, id).await.code(), 0);
    let refused = crate::helpers::eventually(Duration::from_secs(10), || async {
        let log = app.webhook_deliveries(&member, id).await;
        log.data()
            .as_array()
            .is_some_and(|a| !a.is_empty() && a[0]["status"].is_null())
    })
    .await;
    let log = app.webhook_deliveries(&member, id).await;
    assert!(refused, "{}", log.body);
    assert!(
        log.body.to_string().contains("no public address"),
        "{}",
        log.body
    );
    assert!(
        receiver.received().is_empty(),
        "nothing reached the receiver"
    );
}

#[actix_web::test]
async fn administrators_see_every_accounts_endpoints_and_their_failures() {
    let (app, member) = spawn_app().await.with_member("fio", "pro").await;
    let receiver = Receiver::start();
    receiver.answer_with(503);
    let id: &str = &endpoint_tested_once(&app, &member, &receiver).await;

    let admin = app.admin().await;
    let seen = crate::helpers::eventually(Duration::from_secs(10), || async {
        let all = app.get_as(&admin, "/api/v1/admin/webhooks").await;
        all.data()[0]["last_status"] == 503
    })
    .await;
    let all = app.get_as(&admin, "/api/v1/admin/webhooks").await;
    assert!(seen, "{}", all.body);
    let row = &all.data()[0];
    assert_eq!(row["id"], id, "{}", all.body);
    assert_eq!(row["owner"]["username"], "fio");
    // A test message is attempted once (D27): given up, nothing waiting.
    assert_eq!(
        (&row["pending"], &row["failed"], &row["in_flight"]),
        (&json!(0), &json!(1), &json!(0)),
        "{}",
        all.body
    );
    assert_eq!(
        (&row["attempts_24h"], &row["delivered_24h"]),
        (&json!(1), &json!(0)),
        "{}",
        all.body
    );
    assert!(row["p95_latency_ms_24h"].is_number(), "{}", all.body);
    assert!(row["failing_since"].is_string(), "{}", all.body);
    assert!(!all.body.to_string().contains("whsec_"));
    app.get_as(&member, "/api/v1/admin/webhooks")
        .await
        .assert_error(403, 40301);

    let page = app.page_with(&admin.cookie, "/admin/webhooks").await;
    assert_eq!(page.status, 200, "{}", page.html);
    page.assert_has(&format!(r#"data-webhook-id="{id}""#));
    page.assert_has("HTTP 503");
    page.assert_has("0 of 1 answered 2xx");
    page.assert_has("failing since");
}

#[actix_web::test]
async fn redirects_are_not_followed_and_a_kib_of_the_answer_is_kept() {
    let (app, member) = spawn_app().await.with_member("ria", "pro").await;
    let receiver = Receiver::start();
    receiver.answer_with(307);
    receiver.answer_bytes(5000);
    let id: &str = &endpoint_tested_once(&app, &member, &receiver).await;
    let recorded = crate::helpers::eventually(Duration::from_secs(10), || async {
        let log = app.webhook_deliveries(&member, id).await;
        log.data()[0]["status"] == 307
    })
    .await;
    assert!(
        recorded,
        "{}",
        app.webhook_deliveries(&member, id).await.body
    );
    // The redirect (to the same receiver) was not followed: one request came.
    assert_eq!(receiver.received().len(), 1);
    let kept: i32 = select_value(&app.db, "SELECT length(answer) FROM webhook_attempts").await;
    assert_eq!(kept, 1024);
}
