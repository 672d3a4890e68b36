//! Account quotas (D11): a key's counted calls also count against its owner's account,
//! capped at the tier's limits times `max_keys` (deleted keys included), with the same
//! answers and headers as a key's own limits, exact across instances.
//!
//! The test clock stands at 2026-11-20 04:00:00 UTC: 60 s left in the minute, 72000 s
//! in the UTC day. A tier's `max_keys` can be lowered below the keys a member already
//! holds, which is how these tests give an account more keys than its cap allows for.

use chrono::TimeDelta;
use serde_json::{json, Value};

use crate::helpers::{spawn_with_fixture, Key, Reply, Session, TestApp};
use crate::spread::spread;

fn latest() -> Value {
    json!({"api_name": "index_latest"})
}

async fn call(app: &TestApp, key: &Key) -> Reply {
    app.query_with(latest(), Some(&key.key)).await
}

/// `PUT /api/v1/admin/tiers/{tier}` with the seeded settings but these limits.
async fn put_tier(
    app: &TestApp,
    admin: &Session,
    tier: &str,
    (per_minute, per_day): (i64, i64),
    max_keys: Value,
) {
    let (delay, member) = match tier {
        "free" => (7, false),
        _ => (0, true),
    };
    let body = json!({"per_minute": per_minute, "per_day": per_day, "max_rows": 5000,
                      "max_keys": max_keys, "delay_days": delay, "member_indexes": member});
    let reply = app.put_tier(admin, tier, body).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

async fn delete_key(app: &TestApp, owner: &Session, key: &Key) {
    let reply = app.delete_key(owner, &key.id).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

/// The admin's usage of `key` over today, once the account's calls today (flushed
/// every `QUOTA_FLUSH_MS`) reach `expected`.
async fn account_usage(app: &TestApp, admin: &Session, key: &Key, expected: i64) -> Value {
    let path = format!("/api/v1/admin/keys/{}/usage?days=1", key.id);
    let mut usage = Value::Null;
    for _ in 0..200 {
        let reply = app.get_as(admin, &path).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        usage = reply.data().clone();
        if usage["account"]["days"][0]["calls"] == expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    usage
}

/// A pro member `username`, signed in, with three keys named one, two and three: more
/// keys than an account cap lets any one of them use up.
async fn pro_with_three_keys(
    app: &TestApp,
    admin: &Session,
    username: &str,
) -> (Session, Vec<Key>) {
    let member = app.user(admin, username, "pro").await;
    let mut keys = Vec::new();
    for name in ["one", "two", "three"] {
        keys.push(app.new_key(&member, json!({ "name": name })).await);
    }
    (member, keys)
}

/// `X-RateLimit-Limit`, `-Remaining` and `-Reset` of a reply.
fn binding(reply: &Reply) -> (Option<&str>, Option<&str>, Option<&str>) {
    (
        reply.header("x-ratelimit-limit"),
        reply.header("x-ratelimit-remaining"),
        reply.header("x-ratelimit-reset"),
    )
}

#[actix_web::test]
async fn deleting_a_free_members_key_and_creating_another_restores_nothing() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let member = app.user(&admin, "fay", "free").await;
    let first = app.new_key(&member, json!({"name": "first"})).await;
    for n in 1..=10 {
        let reply = call(&app, &first).await;
        assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
    }
    call(&app, &first).await.assert_error(429, 42902);
    delete_key(&app, &member, &first).await;

    // The measured case: the new key's own windows are untouched, the account's are not.
    let second = app.new_key(&member, json!({"name": "second"})).await;
    let refused = call(&app, &second).await;
    refused.assert_error(429, 42902);
    assert_eq!(binding(&refused), (Some("10"), Some("0"), Some("72000")));
    assert_eq!(refused.header("retry-after"), Some("72000"));
    // Refused before step 7: not counted, and its headers show the account's day too.
    let invalid = app
        .query_with(json!({"api_name": "no_such_dataset"}), Some(&second.key))
        .await;
    invalid.assert_error(400, 40001);
    assert_eq!(invalid.rate_remaining(), 0);
    // The back office shows the account's calls next to the new key's.
    let usage = account_usage(&app, &admin, &second, 10).await;
    assert_eq!(
        usage["account"],
        json!({"per_minute": 10, "per_day": 10, "days": [{"date": "20261120", "calls": 10}]})
    );
    assert_eq!(usage["days"], json!([{"date": "20261120", "calls": 0}]));

    // The next UTC day the account starts over.
    app.clock.advance(TimeDelta::hours(20));
    let next_day = call(&app, &second).await;
    assert_eq!(next_day.code(), 0, "{}", next_day.body);
    assert_eq!(next_day.rate_remaining(), 9);
}

#[actix_web::test]
async fn a_pro_account_cap_binds_before_any_key_and_the_headers_describe_it() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    put_tier(&app, &admin, "pro", (1000, 10), Value::Null).await;
    let (_, keys) = pro_with_three_keys(&app, &admin, "pablo").await;
    // Two keys' worth for the account: 2000 a minute, 20 a day; each key still 10 a day.
    put_tier(&app, &admin, "pro", (1000, 10), json!(2)).await;
    for key in &keys[..2] {
        for _ in 0..7 {
            let reply = call(&app, key).await;
            assert_eq!(reply.code(), 0, "{}", reply.body);
        }
    }

    // 14 calls made: the third key has 10 left of its own, the account 6.
    let third = &keys[2];
    for left in (0..6).rev() {
        let reply = call(&app, third).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        let left = left.to_string();
        assert_eq!(
            binding(&reply),
            (Some("20"), Some(left.as_str()), Some("72000"))
        );
    }
    let reply = call(&app, third).await;
    reply.assert_error(429, 42902);
    assert_eq!(binding(&reply), (Some("20"), Some("0"), Some("72000")));
    assert_eq!(reply.header("retry-after"), Some("72000"));
    // Per window, the tighter of the key's and the account's: the key's minute (1000,
    // 6 spent), the account's day (20, all spent).
    assert_eq!(
        reply.header("ratelimit-policy"),
        Some("\"minute\";q=1000;w=60, \"day\";q=20;w=86400")
    );
    assert_eq!(
        reply.header("ratelimit"),
        Some("\"minute\";r=994;t=60, \"day\";r=0;t=72000")
    );
    for key in &keys[..2] {
        call(&app, key).await.assert_error(429, 42902);
    }
}

#[actix_web::test]
async fn unlimited_max_keys_means_no_account_cap() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    put_tier(&app, &admin, "pro", (1000, 3), Value::Null).await;
    let (member, mut keys) = pro_with_three_keys(&app, &admin, "una").await;
    let deleted = keys.remove(0);
    for _ in 0..3 {
        assert_eq!(call(&app, &deleted).await.code(), 0);
    }
    delete_key(&app, &member, &deleted).await;
    keys.push(app.new_key(&member, json!({"name": "four"})).await);

    // Every key gets its own 3 a day, whatever the others and the deleted one spent.
    for key in &keys {
        for left in [2, 1, 0] {
            let reply = call(&app, key).await;
            assert_eq!(reply.code(), 0, "{}", reply.body);
            assert_eq!(reply.header("x-ratelimit-limit"), Some("3"));
            assert_eq!(reply.rate_remaining(), left);
        }
        let refused = call(&app, key).await;
        refused.assert_error(429, 42902);
        assert_eq!(refused.header("x-ratelimit-limit"), Some("3"));
    }
    // Counted all the same (a cap set later would charge these calls), but not capped.
    let usage = account_usage(&app, &admin, &keys[0], 12).await;
    assert_eq!(
        usage["account"],
        json!({"per_minute": null, "per_day": null, "days": [{"date": "20261120", "calls": 12}]})
    );
}

#[actix_web::test]
async fn a_keys_own_lower_limit_does_not_lower_the_account_cap() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let member = app.user(&admin, "otto", "free").await;
    let narrow = app.new_key(&member, json!({"name": "narrow"})).await;
    app.patch_key(&admin, &narrow, json!({"per_day": 4})).await;
    for _ in 0..4 {
        assert_eq!(call(&app, &narrow).await.code(), 0);
    }
    let refused = call(&app, &narrow).await;
    refused.assert_error(429, 42902);
    assert_eq!(refused.header("x-ratelimit-limit"), Some("4"));
    delete_key(&app, &member, &narrow).await;

    // The account's cap is the free tier's 10 a day, not the deleted key's 4: 6 left.
    // A minute later, so the account's minute (10, 4 spent) does not tie with its day.
    app.clock.advance(TimeDelta::minutes(1));
    let wide = app.new_key(&member, json!({"name": "wide"})).await;
    let first = call(&app, &wide).await;
    assert_eq!(first.code(), 0, "{}", first.body);
    assert_eq!(binding(&first), (Some("10"), Some("5"), Some("71940")));
    for _ in 0..5 {
        assert_eq!(call(&app, &wide).await.code(), 0);
    }
    let refused = call(&app, &wide).await;
    refused.assert_error(429, 42902);
    assert_eq!(binding(&refused), (Some("10"), Some("0"), Some("71940")));
}

#[actix_web::test]
async fn the_accounts_minute_refuses_with_42901_and_rolls_over_with_the_clock() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    put_tier(&app, &admin, "pro", (3, 100), Value::Null).await;
    let member = app.user(&admin, "mina", "pro").await;
    let a = app.new_key(&member, json!({"name": "a"})).await;
    let b = app.new_key(&member, json!({"name": "b"})).await;
    // One key's worth: 3 a minute and 100 a day for the account, as for each key.
    put_tier(&app, &admin, "pro", (3, 100), json!(1)).await;
    for key in [&a, &a, &b] {
        assert_eq!(call(&app, key).await.code(), 0);
    }
    app.clock.advance(TimeDelta::seconds(30));
    for key in [&b, &a] {
        let refused = call(&app, key).await;
        refused.assert_error(429, 42901);
        assert_eq!(binding(&refused), (Some("3"), Some("0"), Some("30")));
        assert_eq!(refused.header("retry-after"), Some("30"));
    }

    // The next calendar minute: the account's minute is empty again.
    app.clock.advance(TimeDelta::seconds(30));
    let reply = call(&app, &b).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(binding(&reply), (Some("3"), Some("2"), Some("60")));
    assert_eq!(
        reply.header("ratelimit"),
        Some("\"minute\";r=2;t=60, \"day\";r=96;t=71940")
    );
}

#[actix_web::test]
async fn two_instances_admit_exactly_the_account_cap() {
    let first = spawn_with_fixture().await;
    let admin = first.admin().await;
    let member = first.user(&admin, "ines", "pro").await;
    let a = first.new_key(&member, json!({"name": "a"})).await;
    let b = first.new_key(&member, json!({"name": "b"})).await;
    // Each key 41 a day of its own; the account 41 a day over both.
    put_tier(&first, &admin, "pro", (1000, 41), json!(1)).await;
    // Started after the tier change, so it reads the new tier, not a cached one.
    let second = first.another_instance().await;

    // Each instance serves its own key; demand is twice the cap, interleaved.
    let targets = vec![
        (first.address.clone(), a.key.clone()),
        (second.address.clone(), b.key.clone()),
    ];
    let (admitted, refused) = spread(targets, 82, 12, 42902).await;
    assert_eq!((admitted, refused), (41, 41));

    // Never over-granted in the database either.
    let account = format!("acct:{}", member.user_id);
    let granted: i64 = first
        .db
        .query_one(
            "SELECT coalesce(max(granted), 0) FROM quota_windows \
             WHERE key_id = $1 AND span = 'day'",
            &[&account],
        )
        .await
        .expect("the account's windows")
        .get(0);
    assert!(granted <= 41, "granted {granted}");
}
