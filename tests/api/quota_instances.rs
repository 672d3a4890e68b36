//! The quota across instances (D6): three instances on one database, concurrent
//! clients spreading one key's calls over all of them. The admitted calls must equal
//! the limit exactly, run after run: never more (the limit holds), never fewer (no
//! budget stranded while demand lasts).

use serde_json::json;

use crate::helpers::{select_value, spawn_with_fixture, Key};

/// Concurrent clients; each sends its share of the calls one after another.
const CLIENTS: usize = 24;

/// Sends `calls` queries with `key`, round-robin over `instances` from `CLIENTS`
/// concurrent clients; answers (admitted, refused with `refusal`).
async fn spread(instances: &[String], key: &Key, calls: usize, refusal: i64) -> (usize, usize) {
    let targets = instances
        .iter()
        .map(|instance| (instance.clone(), key.key.clone()))
        .collect();
    crate::spread::spread(targets, calls, CLIENTS, refusal).await
}

#[actix_web::test]
async fn three_instances_admit_exactly_the_limit() {
    let first = spawn_with_fixture().await;
    let second = first.another_instance().await;
    let third = first.another_instance().await;
    let instances = [
        first.address.clone(),
        second.address.clone(),
        third.address.clone(),
    ];
    let admin = first.admin().await;
    let owner = first.user(&admin, "quinn", "pro").await;

    // Daily limits, odd and even, small and large against the 24 clients; each run is a
    // new key, so a new window. Demand is twice the limit.
    for (run, limit) in [7_usize, 24, 61, 100, 257, 500].into_iter().enumerate() {
        let key = first
            .new_key(&owner, json!({"name": format!("run {run}")}))
            .await;
        first
            .patch_key(&admin, &key, json!({"per_day": limit}))
            .await;
        let (admitted, refused) = spread(&instances, &key, 2 * limit, 42902).await;
        assert_eq!(
            (admitted, refused),
            (limit, limit),
            "run {run}: day limit {limit}"
        );
    }

    // The minute window the same way.
    let key = first.new_key(&owner, json!({"name": "minute"})).await;
    first
        .patch_key(&admin, &key, json!({"per_minute": 150}))
        .await;
    let (admitted, refused) = spread(&instances, &key, 300, 42901).await;
    assert_eq!((admitted, refused), (150, 150));

    // Never over-granted in the database either.
    let over: i64 = select_value(
        &first.db,
        "SELECT count(*) FROM quota_windows q JOIN api_keys k USING (key_id) \
         WHERE q.granted > coalesce(CASE q.span WHEN 'day' THEN k.per_day \
                                                ELSE k.per_minute END, 10000)",
    )
    .await;
    assert_eq!(over, 0);
}
