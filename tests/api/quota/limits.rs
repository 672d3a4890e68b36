//! A key's two windows: exactly its daily limit then 42902 until the next UTC day, the
//! minute refusing with 42901 and rolling over, the headers describing both, and a change
//! of tier or of the key's own limit applying at once.

use chrono::TimeDelta;
use reqwest::Method;
use serde_json::{json, Value};

use super::{call, latest};
use crate::helpers::{spawn_with_fixture, Key, Session, TestApp};

async fn put_tier(app: &TestApp, admin: &Session, tier: &str, per_minute: i64, per_day: i64) {
    let (max_keys, delay, member) = match tier {
        "free" => (json!(1), 7, false),
        _ => (Value::Null, 0, true),
    };
    let body = json!({"per_minute": per_minute, "per_day": per_day, "max_rows": 5000,
                      "max_keys": max_keys, "delay_days": delay, "member_indexes": member});
    let path = format!("/api/v1/admin/tiers/{tier}");
    let reply = app.send_as(admin, Method::PUT, &path, body).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

/// A pro member `username`'s key with limits of its own: `per_minute` and `per_day`.
async fn pro_key_limited(
    app: &TestApp,
    admin: &Session,
    username: &str,
    per_minute: i64,
    per_day: i64,
) -> Key {
    let key = app.key_of_tier(admin, username, "pro").await;
    let limits = json!({"per_minute": per_minute, "per_day": per_day});
    app.patch_key(admin, &key, limits).await;
    key
}

#[actix_web::test]
async fn a_free_key_gets_exactly_its_limit_then_42902_until_the_next_utc_day() {
    let app = spawn_with_fixture().await;
    let key = app.member_key("fred", "free").await;
    for n in 1..=10 {
        let reply = call(&app, &key).await;
        assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
        assert_eq!(reply.rate_remaining(), 10 - n);
        assert_eq!(reply.rate_limit(), 10);
        assert!(reply.header("retry-after").is_none());
    }
    // Minute and day are both used up: 42902, because waiting a minute would not help.
    let refused = call(&app, &key).await;
    refused.assert_error(429, 42902);
    assert_eq!(refused.header("retry-after"), Some("72000"));
    assert_eq!(refused.header("x-ratelimit-reset"), Some("72000"));
    assert_eq!(refused.rate_remaining(), 0);

    app.clock.advance(TimeDelta::minutes(1));
    call(&app, &key).await.assert_error(429, 42902);
    app.clock
        .advance(TimeDelta::hours(20) - TimeDelta::minutes(1));
    let next_day = call(&app, &key).await;
    assert_eq!(next_day.code(), 0, "{}", next_day.body);
    assert_eq!(next_day.rate_remaining(), 9);
}

#[actix_web::test]
async fn the_minute_window_refuses_with_42901_and_rolls_over() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let key = pro_key_limited(&app, &admin, "mia", 3, 5).await;
    for _ in 0..3 {
        assert_eq!(call(&app, &key).await.code(), 0);
    }
    app.clock.advance(TimeDelta::seconds(59));
    let refused = call(&app, &key).await;
    refused.assert_error(429, 42901);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.rate_limit(), 3);

    // The next calendar minute: two calls left of the day, then the day refuses.
    app.clock.advance(TimeDelta::seconds(1));
    for left in [1, 0] {
        let reply = call(&app, &key).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        assert_eq!(reply.rate_remaining(), left);
    }
    call(&app, &key).await.assert_error(429, 42902);
}

#[actix_web::test]
async fn headers_describe_both_windows() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let key = pro_key_limited(&app, &admin, "hana", 5, 100).await;
    let reply = call(&app, &key).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    // The minute binds: fewer calls left there.
    assert_eq!(reply.rate_limit(), 5);
    assert_eq!(reply.header("x-ratelimit-remaining"), Some("4"));
    assert_eq!(reply.header("x-ratelimit-reset"), Some("60"));
    assert_eq!(
        reply.header("ratelimit-policy"),
        Some("\"minute\";q=5;w=60, \"day\";q=100;w=86400")
    );
    assert_eq!(
        reply.header("ratelimit"),
        Some("\"minute\";r=4;t=60, \"day\";r=99;t=72000")
    );

    // Website identities carry none of them.
    let visitor = app.query(latest()).await;
    assert_eq!(visitor.code(), 0);
    assert!(visitor.header("x-ratelimit-limit").is_none());
    assert!(visitor.header("ratelimit").is_none());
}

#[actix_web::test]
async fn a_tier_change_applies_at_once() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let key = app.key_of_tier(&admin, "tom", "free").await;
    for _ in 0..4 {
        assert_eq!(call(&app, &key).await.code(), 0);
    }
    put_tier(&app, &admin, "free", 10, 4).await;
    call(&app, &key).await.assert_error(429, 42902);

    put_tier(&app, &admin, "free", 100, 100).await;
    let reply = call(&app, &key).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(
        reply.header("ratelimit"),
        Some("\"minute\";r=95;t=60, \"day\";r=95;t=72000")
    );

    // A key's own limit narrows the tier's, and applies at once too.
    app.patch_key(&admin, &key, json!({"per_day": 5})).await;
    call(&app, &key).await.assert_error(429, 42902);
}

/// A day limit lowered the same day: the calls already made count against the new
/// limit, and the key gets exactly the rest, also when it had leased budget under the
/// old limit and spent part of it unreported. (Through a crash: `faults::sigkill`.)
#[actix_web::test]
async fn a_day_limit_lowered_the_same_day_admits_exactly_the_rest() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    for (before, lowered) in [(0, 100), (5, 100), (40, 100), (7, 8)] {
        let key = app
            .key_of_tier(&admin, &format!("lowe{before}x{lowered}"), "pro")
            .await;
        for n in 0..before {
            assert_eq!(call(&app, &key).await.code(), 0, "call {n}");
        }
        app.patch_key(&admin, &key, json!({"per_day": lowered}))
            .await;
        let mut admitted = 0;
        loop {
            let reply = call(&app, &key).await;
            if reply.code() != 0 {
                reply.assert_error(429, 42902);
                break;
            }
            admitted += 1;
            assert!(admitted <= lowered, "past the new limit");
        }
        assert_eq!(
            before + admitted,
            lowered,
            "{before} calls, then per_day {lowered}: {admitted} more admitted"
        );
    }
}
