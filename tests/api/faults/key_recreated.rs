//! D11 across instances: deleting a key and creating another, on one instance, while
//! another instance is serving the old key under load, restores no quota.
//!
//! Two instances (A, B) share one database. The pro tier is set to 1000 calls a minute
//! and 20 a day with `max_keys` 1, so the account may make 20 calls a day over all its
//! keys, deleted ones included. Two clients call the member's key on A; once A has
//! admitted a few, the member deletes that key on B and creates a new one there, while
//! A goes on serving the old key. Then six more clients call the old key on B and the
//! new key on A and on B, until both instances refuse the new key.
//!
//! Asserted: over both keys and both instances, exactly the account's 20 calls are
//! admitted, and the account's day window says so; B refuses the deleted key (401 /
//! 40102) from the delete's answer on, and A within [`PROPAGATION`] of it (the delete
//! commits a `NOTIFY`; A's change listener drops its key cache on it, see
//! `iq_actors::changes`: prompt, but not synchronous); once the account's 20 are
//! admitted, the new key gets 429 / 42902 on both instances.

use std::time::{Duration, Instant};

use chrono::NaiveTime;
use serde_json::{json, Value};

use super::{day_window, logged_calls, settles, until, Answer, Clients, Target};
use crate::helpers::{now, spawn_with_fixture, Session, TestApp};

const PER_DAY: i64 = 20;
const PER_MINUTE: i64 = 1000;

/// How soon after the delete's answer instance A must refuse the deleted key.
const PROPAGATION: Duration = Duration::from_secs(1);

/// Calls A admits with the old key before it is deleted.
const ADMITTED_FIRST: usize = 5;

/// Targets, as the answers are tagged once the two sets of clients are merged.
const OLD_A: usize = 0;
const OLD_B: usize = 1;
const NEW_A: usize = 2;
const NEW_B: usize = 3;
const NAMES: [&str; 4] = [
    "old key on A",
    "old key on B",
    "new key on A",
    "new key on B",
];

fn target(app: &TestApp, key: &str) -> Target {
    Target {
        base: app.address.clone(),
        key: key.to_string(),
    }
}

/// `PUT /api/v1/admin/tiers/pro` with the seeded settings but these limits.
async fn put_pro_tier(
    app: &TestApp,
    admin: &Session,
    (per_minute, per_day): (i64, i64),
    max_keys: Value,
) {
    let body = json!({"per_minute": per_minute, "per_day": per_day, "max_rows": 5000,
                      "max_keys": max_keys, "delay_days": 0, "member_indexes": true});
    let reply = app.put_tier(admin, "pro", body).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

fn describe(list: &[&Answer]) -> String {
    let lines: Vec<String> = list
        .iter()
        .take(10)
        .map(|a| format!("{}: {}", NAMES[a.target], a.describe()))
        .collect();
    format!("{} answers:\n{}", list.len(), lines.join("\n"))
}

#[actix_web::test]
async fn a_key_deleted_and_recreated_across_instances_restores_no_quota() {
    let a = spawn_with_fixture().await;
    let admin = a.admin().await;
    put_pro_tier(&a, &admin, (PER_MINUTE, PER_DAY), json!(1)).await;
    let member = a.user(&admin, "kira", "pro").await;
    let old = a.new_key(&member, json!({"name": "old"})).await;
    // Started after the tier change, so it reads the new tier, not a cached one.
    let b = a.another_instance().await;

    // The old key under load on A.
    let first = Clients::start(
        crate::helpers::http_client(),
        2,
        vec![target(&a, &old.key)],
        |_, _| Some(0),
        Duration::from_millis(25),
        |_| false,
    );
    first
        .await_successes(
            ADMITTED_FIRST,
            Duration::from_secs(10),
            "of the old key on A",
        )
        .await;

    // On B, while A serves it: the old key goes, a new one comes.
    let delete_sent = Instant::now();
    let reply = b.delete_key(&member, &old.id).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let deleted = Instant::now();
    let new = b.new_key(&member, json!({"name": "new"})).await;

    // OLD_B, NEW_A, NEW_B: tagged 0, 1, 2 by these clients, one less than below.
    let targets = vec![
        target(&b, &old.key),
        target(&a, &new.key),
        target(&b, &new.key),
    ];
    let second = Clients::start(
        crate::helpers::http_client(),
        6,
        targets,
        |client, _| Some(client % 3),
        Duration::from_millis(10),
        |_| false,
    );
    // Until both instances refuse the new key, and long enough for A to see the delete.
    let refused = until(Duration::from_secs(15), || {
        deleted.elapsed() > PROPAGATION + Duration::from_millis(500)
            && second.count(|x| x.target + 1 == NEW_A && x.is(429, 42902)) > 0
            && second.count(|x| x.target + 1 == NEW_B && x.is(429, 42902)) > 0
    })
    .await;
    let mut answers = first.finish().await;
    answers.extend(second.finish().await.into_iter().map(|mut x| {
        x.target += 1;
        x
    }));
    answers.sort_by_key(|x| x.ended);
    assert!(refused, "the new key was not refused on both instances");

    let of = |t: usize| -> Vec<&Answer> { answers.iter().filter(|x| x.target == t).collect() };
    // Only these answers, each where it may come.
    let odd: Vec<&Answer> = answers
        .iter()
        .filter(|x| {
            let old_key = x.target == OLD_A || x.target == OLD_B;
            !(x.ok() || x.is(429, 42902) || (old_key && x.is(401, 40102) && x.ended > delete_sent))
        })
        .collect();
    assert!(odd.is_empty(), "unexpected: {}", describe(&odd));

    // The deleted key: refused by B from the delete's answer on, by A within PROPAGATION.
    let not_refused = |t: usize, from: Instant| -> Vec<&Answer> {
        answers
            .iter()
            .filter(|x| x.target == t && x.sent >= from && !x.is(401, 40102))
            .collect()
    };
    let on_b = not_refused(OLD_B, deleted);
    assert!(on_b.is_empty(), "B after the delete: {}", describe(&on_b));
    assert!(!of(OLD_B).is_empty(), "the old key was never sent to B");
    let on_a = not_refused(OLD_A, deleted + PROPAGATION);
    assert!(
        on_a.is_empty(),
        "A more than {PROPAGATION:?} after the delete: {}",
        describe(&on_a)
    );
    let late = of(OLD_A)
        .into_iter()
        .filter(|x| x.sent >= deleted + PROPAGATION);
    assert!(late.count() > 0, "no call of the old key on A to check");
    let seen = of(OLD_A)
        .into_iter()
        .find(|x| x.is(401, 40102))
        .map(|x| x.ended.saturating_duration_since(deleted));
    eprintln!("A refused the deleted key {seen:?} after the delete's answer");

    // The account's 20 over both keys and both instances, then 42902 for the new key.
    let admitted: Vec<&Answer> = answers.iter().filter(|x| x.ok()).collect();
    let per_target: Vec<usize> = (0..4)
        .map(|t| of(t).iter().filter(|x| x.ok()).count())
        .collect();
    eprintln!("admitted (old on A, old on B, new on A, new on B): {per_target:?}");
    let total = admitted.len() as i64;
    assert!(total <= PER_DAY, "over the account's cap: {per_target:?}");
    // And all of it: each instance refused the new key only once none was left to lease.
    assert_eq!(total, PER_DAY, "budget left unspent: {per_target:?}");
    let used_up = admitted.last().expect("admitted calls").ended;
    let after: Vec<&Answer> = answers
        .iter()
        .filter(|x| (x.target == NEW_A || x.target == NEW_B) && x.sent > used_up)
        .filter(|x| !x.is(429, 42902))
        .collect();
    assert!(
        after.is_empty(),
        "the new key after the cap: {}",
        describe(&after)
    );
    for t in [NEW_A, NEW_B] {
        let refusals = of(t).iter().filter(|x| x.is(429, 42902)).count();
        assert!(refusals > 0, "{} never refused", NAMES[t]);
    }

    // The database agrees once the flushes land: the account's day used 20, never
    // granted more, and one call-log row per admitted call.
    let db = &a.db;
    let day = now().date_naive().and_time(NaiveTime::MIN).and_utc();
    let account = format!("acct:{}", member.user_id);
    // (`used` of the account's day window, call-log rows of both keys, those with code 0).
    let want = (PER_DAY, PER_DAY, PER_DAY);
    let seen = settles(Duration::from_secs(5), &want, || async {
        let (_, used) = day_window(db, &account, day).await;
        let (old_rows, old_ok) = logged_calls(db, &old.id).await;
        let (new_rows, new_ok) = logged_calls(db, &new.id).await;
        (used, old_rows + new_rows, old_ok + new_ok)
    })
    .await;
    assert_eq!(
        seen, want,
        "(account's used, call-log rows, rows with code 0)"
    );
    let (granted, _) = day_window(db, &account, day).await;
    assert!(granted <= PER_DAY, "the account was granted {granted}");
}
