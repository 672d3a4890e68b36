//! The feed itself: a long poll returns within a second of an import and after `wait`
//! when nothing comes; `types` and `index_code` narrow it; bad parameters (a cursor
//! beyond the newest event among them) are 40001; it needs a key that may read indexes;
//! it counts toward no quota, and each key is held to the keyless limit a minute.

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::helpers::quotes::spawn_for_imports;

#[actix_web::test]
async fn a_long_poll_returns_within_a_second_of_an_import() {
    let (app, admin, pro) = spawn_for_imports().await;
    let poll = async {
        let reply = app.events_with(&pro.key, "after=evt_0&wait=20").await;
        (reply, Instant::now())
    };
    let publish = async {
        import(&app, &admin, "quotes.csv", &quotes()).await;
        Instant::now()
    };
    let ((reply, answered), imported) = futures_util::join!(poll, publish);
    assert!(!events_of(&reply).is_empty(), "{}", reply.body);
    let late = answered.saturating_duration_since(imported);
    assert!(
        late < Duration::from_secs(1),
        "answered {late:?} after the import"
    );
}

#[actix_web::test]
async fn a_long_poll_with_nothing_to_tell_returns_after_wait() {
    let (app, _admin, pro) = spawn_for_imports().await;
    let started = Instant::now();
    let reply = app.events_with(&pro.key, "wait=1").await;
    let took = started.elapsed();
    assert!(events_of(&reply).is_empty(), "{}", reply.body);
    assert_eq!(reply.data()["next"], "evt_0");
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[actix_web::test]
async fn bad_parameters_are_40001() {
    let (app, _admin, pro) = spawn_for_imports().await;
    for (query, names) in [
        ("after=42", "after"),
        ("after=evt_x", "after"),
        ("after=evt_1&after=evt_2", "after"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("wait=31", "wait"),
        ("wait=-1", "wait"),
        ("since=20261101", "since"),
        // Beyond the newest event (none yet): a stale cursor must not skip in silence.
        ("after=evt_9999", "after"),
        ("types=index.deleted", "types"),
        ("types=index.published,", "types"),
        ("index_code=No_Such_Index", "index_code"),
        ("index_code=GPU%20Index", "index_code"),
    ] {
        let reply = app.events_with(&pro.key, query).await;
        reply.assert_error_mentioning(400, 40001, names);
    }
}

#[actix_web::test]
async fn the_feed_needs_a_key_that_may_read_indexes() {
    let (app, admin, _pro) = spawn_for_imports().await;
    app.get("/api/v1/events").await.assert_error(401, 40101);
    app.get_as(&admin, "/api/v1/events")
        .await
        .assert_error(401, 40101);
    app.events_with("iq_not_a_key", "")
        .await
        .assert_error(401, 40102);
    let quotes_only = app.key_of_tier(&admin, "quinn", "pro").await;
    app.patch_key(&admin, &quotes_only, json!({"scopes": ["quote:read"]}))
        .await;
    app.events_with(&quotes_only.key, "")
        .await
        .assert_error(403, 40301);
}

#[actix_web::test]
async fn the_feed_counts_toward_no_quota() {
    let (app, _admin, pro) = spawn_for_imports().await;
    for _ in 0..3 {
        events_of(&app.events_with(&pro.key, "").await);
    }
    let membership = app.membership_with(&pro.key).await;
    assert_eq!(
        membership.data()["quota"]["used_day"],
        0,
        "{}",
        membership.body
    );
}

#[actix_web::test]
async fn each_key_is_held_to_the_keyless_limit_a_minute() {
    let app = crate::helpers::spawn_with(
        crate::helpers::Spawn::default().tuned(|s| s.site.website_per_minute = 3),
    )
    .await;
    let one = app.member_key("una", "pro").await;
    let two = app.member_key("uma", "pro").await;
    for _ in 0..3 {
        events_of(&app.events_with(&one.key, "").await);
    }
    let refused = app.events_with(&one.key, "").await;
    refused.assert_error(429, 42901);
    assert!(refused.header("retry-after").is_some(), "{}", refused.body);
    // Another key has a minute of its own.
    events_of(&app.events_with(&two.key, "").await);
}

#[actix_web::test]
async fn types_and_index_code_narrow_the_feed() {
    let (app, admin, pro, _free) = imported().await;
    let fix = [("20261110", "GPU_Index", "unit", "1", "2222")];
    import(&app, &admin, "fix.csv", &fix).await;
    let (every, newest) = all_events(&app, &pro, "evt_0").await;
    let kinds = |events: &[Value]| {
        let mut kinds: Vec<String> = events
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect();
        kinds.dedup();
        kinds
    };
    assert!(kinds(&every).contains(&REVISED.to_string()), "{every:?}");

    let revised = events_of(
        &app.events_with(&pro.key, "types=index.revised&limit=1000")
            .await,
    );
    assert!(!revised.is_empty());
    assert_eq!(kinds(&revised), [REVISED], "{revised:?}");
    assert_eq!(
        revised.len(),
        every.iter().filter(|e| e["type"] == REVISED).count()
    );

    let gpu = events_of(
        &app.events_with(&pro.key, "index_code=GPU_Index&limit=1000")
            .await,
    );
    assert!(!gpu.is_empty());
    assert!(
        gpu.iter().all(|e| e["data"]["index_code"] == "GPU_Index"),
        "{gpu:?}"
    );

    let both = events_of(
        &app.events_with(
            &pro.key,
            "types=index.published,index.revised&index_code=GPU_Index&limit=1000",
        )
        .await,
    );
    assert_eq!(both, gpu);
    // The newest event's id is a cursor like any other: nothing after it, no refusal.
    let reply = app.events_with(&pro.key, &format!("after={newest}")).await;
    assert!(events_of(&reply).is_empty(), "{}", reply.body);
}
