//! Step 7: per-minute and daily key quotas (spec part 8, D6), their headers, what
//! counts, usage in the back office, the call log, and a database outage.
//!
//! The test clock stands at 2026-11-20 04:00:00 UTC: 60 s left in the minute, 72000 s
//! in the UTC day.

use chrono::TimeDelta;
use reqwest::Method;
use serde_json::{json, Value};

use iq_actors::quota::ShowStats;

use crate::helpers::{eventually, spawn_with_fixture, Key, Reply, Session, TestApp};

fn latest() -> Value {
    json!({"api_name": "index_latest"})
}

fn daily(code: &str) -> Value {
    json!({"api_name": "index_daily", "params": {"index_code": code}})
}

async fn call(app: &TestApp, key: &Key) -> Reply {
    app.query_with(latest(), Some(&key.key)).await
}

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
async fn a_free_key_gets_exactly_its_limit_then_42902_until_the_next_utc_day() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "fred", "free").await;
    for n in 1..=10 {
        let reply = call(&app, &key).await;
        assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
        assert_eq!(reply.rate_remaining(), 10 - n);
        assert_eq!(reply.header("x-ratelimit-limit"), Some("10"));
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
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "mia", "pro").await;
    app.patch_key(&admin, &key, json!({"per_minute": 3, "per_day": 5}))
        .await;
    for _ in 0..3 {
        assert_eq!(call(&app, &key).await.code(), 0);
    }
    app.clock.advance(TimeDelta::seconds(59));
    let refused = call(&app, &key).await;
    refused.assert_error(429, 42901);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("x-ratelimit-limit"), Some("3"));

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
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "hana", "pro").await;
    app.patch_key(&admin, &key, json!({"per_minute": 5, "per_day": 100}))
        .await;
    let reply = call(&app, &key).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    // The minute binds: fewer calls left there.
    assert_eq!(reply.header("x-ratelimit-limit"), Some("5"));
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
async fn only_calls_that_pass_steps_1_to_6_count() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let owner = app.user(&admin, "olga", "free").await;
    let key = app
        .new_key(
            &owner,
            json!({"name": "narrow", "index_codes": ["Server_Index"]}),
        )
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
    let mistyped = format!("{}x", &key.key[..key.key.len() - 1]);
    let unknown = app.query_with(latest(), Some(&mistyped)).await;
    assert_eq!(unknown.status, 401, "{}", unknown.body);
    assert!(unknown.header("x-ratelimit-limit").is_none());
    // Website identity, /config and /membership never count.
    let session = app.get_as(&owner, "/api/v1/membership").await;
    assert_eq!(session.code(), 0);
    assert_eq!(app.config().await.code(), 0);
    let as_member = app
        .call(
            Method::POST,
            "/api/v1/query",
            Some(latest()),
            Some(&owner),
            false,
        )
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
async fn a_tier_change_applies_at_once() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
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

#[actix_web::test]
async fn usage_shows_in_the_key_list_and_to_admins() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
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

#[actix_web::test]
async fn each_counted_call_is_in_the_call_log() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "leo", "free").await;
    let ok = app.query_with(daily("Server_Index"), Some(&key.key)).await;
    assert_eq!(ok.code(), 0, "{}", ok.body);
    // Step 8 refuses after step 7: counted, and logged with its code.
    let member = app
        .query_with(daily("Hardware_Index"), Some(&key.key))
        .await;
    member.assert_error(403, 40301);
    // Refused before step 7: not logged.
    app.query_with(json!({"api_name": 1}), Some(&key.key))
        .await
        .assert_error(400, 40001);

    let mut rows = Vec::new();
    for _ in 0..200 {
        rows = app
            .db
            .query(
                "SELECT request_id, key_id, api_name, code, rows, latency_us, called_at \
                 FROM call_log ORDER BY called_at, code",
                &[],
            )
            .await
            .unwrap();
        if rows.len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(rows.len(), 2);
    let logged: Vec<(String, String, String, i32, i32)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    let id = |reply: &Reply| reply.body["request_id"].as_str().unwrap().to_string();
    assert_eq!(
        logged,
        vec![
            (
                id(&ok),
                key.id.clone(),
                "index_daily".into(),
                0,
                ok.items().len() as i32
            ),
            (id(&member), key.id.clone(), "index_daily".into(), 40301, 0),
        ]
    );
    assert!(rows.iter().all(|r| r.get::<_, i64>(5) > 0));
    assert!(rows
        .iter()
        .all(|r| r.get::<_, chrono::DateTime<chrono::Utc>>(6) == crate::helpers::now()));
}

#[actix_web::test]
async fn call_log_rows_past_retention_are_pruned() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "pia", "free").await;
    let old = |days: i64| crate::helpers::now() - TimeDelta::days(days);
    for (id, at) in [("req_old", old(91)), ("req_recent", old(10))] {
        app.db
            .execute(
                "INSERT INTO call_log VALUES ($1, $2, 'index_latest', 0, 1, 100, $3)",
                &[&id, &key.id, &at],
            )
            .await
            .unwrap();
    }
    // Pruning runs on the first flush of each UTC day.
    app.clock.advance(TimeDelta::days(1));
    let mut left = Vec::new();
    for _ in 0..200 {
        left = app
            .db
            .query("SELECT request_id FROM call_log ORDER BY request_id", &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>();
        if left.len() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(left, vec!["req_recent".to_string()]);
}

/// The call log is partitioned by month: a month whose end is past retention is
/// dropped whole, a row of a month with no table yet waits in the default partition
/// and moves into the month's table when it is made.
#[actix_web::test]
async fn call_log_months_past_retention_are_dropped_whole() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "pam", "free").await;
    let insert = |id: &'static str, at: chrono::DateTime<chrono::Utc>| {
        let db = &app.db;
        let key_id = key.id.clone();
        async move {
            db.execute(
                "INSERT INTO call_log VALUES ($1, $2, 'index_latest', 0, 1, 100, $3)",
                &[&id, &key_id, &at],
            )
            .await
            .unwrap();
        }
    };
    let partition_of = |id: &'static str| {
        let db = &app.db;
        async move {
            db.query_one(
                "SELECT tableoid::regclass::text FROM call_log WHERE request_id = $1",
                &[&id],
            )
            .await
            .unwrap()
            .get::<_, String>(0)
        }
    };
    let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    // July 2026 has no table yet: its row waits in the default partition...
    insert("req_july", at("2026-07-10T12:00:00Z")).await;
    assert_eq!(partition_of("req_july").await, "call_log_default");
    // ...and moves into the month's table when it is made.
    let made: bool = app
        .db
        .query_one("SELECT call_log_partition('2026-07-15T00:00:00Z')", &[])
        .await
        .unwrap()
        .get(0);
    assert!(made);
    assert_eq!(partition_of("req_july").await, "call_log_y2026m07");
    insert("req_recent", crate::helpers::now() - TimeDelta::days(10)).await;

    // Retention is 90 days: on 21 Nov, July has ended before 23 Aug and goes whole.
    app.clock.advance(TimeDelta::days(1));
    let dropped = eventually(std::time::Duration::from_secs(5), || async {
        app.db
            .query_one("SELECT to_regclass('call_log_y2026m07') IS NULL", &[])
            .await
            .unwrap()
            .get::<_, bool>(0)
    })
    .await;
    assert!(dropped, "the July table is still there");
    let left: Vec<String> = app
        .db
        .query("SELECT request_id FROM call_log ORDER BY request_id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(left, ["req_recent"]);
    // The prune made this month's and next month's tables (of the service's clock).
    for month in ["call_log_y2026m11", "call_log_y2026m12"] {
        let exists: bool = app
            .db
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&month])
            .await
            .unwrap()
            .get(0);
        assert!(exists, "{month}");
    }
}

#[actix_web::test]
async fn without_the_database_held_leases_serve_and_the_rest_get_50000() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let leased = app.key_of_tier(&admin, "lee", "pro").await;
    let idle = app.key_of_tier(&admin, "ida", "pro").await;
    assert_eq!(call(&app, &leased).await.code(), 0);
    // Authenticated and known to the quota, but holding no lease.
    app.query_with(json!({"api_name": 1}), Some(&idle.key))
        .await
        .assert_error(400, 40001);

    app.cut_database().await;
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(call(&app, &leased).await.code());
    }
    let without = call(&app, &idle).await;
    app.restore_database().await;
    assert_eq!(held, vec![0; 5]);
    without.assert_error(500, 50000);

    // It recovers by itself once the database is back.
    let mut code = 50000;
    for _ in 0..100 {
        code = call(&app, &idle).await.code();
        if code == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(code, 0);
}

#[actix_web::test]
async fn far_from_the_limit_one_lease_serves_a_block_of_calls() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "bodil", "pro").await;
    let quota = app.quota.as_ref().expect("in-process instance");
    let before = quota.send(ShowStats).await.unwrap();
    for _ in 0..200 {
        assert_eq!(call(&app, &key).await.code(), 0);
    }
    let after = quota.send(ShowStats).await.unwrap();
    // 10000 a day: the first lease takes a quarter of it, for both windows at once.
    assert_eq!(after.leases - before.leases, 1);
    assert_eq!(after.admitted - before.admitted, 200);
}
