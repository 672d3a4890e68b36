//! The call log: each counted call logged with its code, rows past retention pruned, and
//! its monthly partitions made ahead and dropped whole once past retention.

use chrono::TimeDelta;
use serde_json::json;

use super::daily;
use crate::helpers::{
    eventually, select_column, select_pairs, select_value, spawn_with_fixture, Reply,
};

#[actix_web::test]
async fn each_counted_call_is_in_the_call_log() {
    let app = spawn_with_fixture().await;
    let key = app.member_key("leo", "free").await;
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
    let key = app.member_key("pia", "free").await;
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
        left = select_column::<String>(
            &app.db,
            "SELECT request_id FROM call_log ORDER BY request_id",
        )
        .await;
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
    let key = app.member_key("pam", "free").await;
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
    let made: bool =
        select_value(&app.db, "SELECT call_log_partition('2026-07-15T00:00:00Z')").await;
    assert!(made);
    assert_eq!(partition_of("req_july").await, "call_log_y2026m07");
    insert("req_recent", crate::helpers::now() - TimeDelta::days(10)).await;

    // Retention is 90 days: on 21 Nov, July has ended before 23 Aug and goes whole.
    app.clock.advance(TimeDelta::days(1));
    let dropped = eventually(std::time::Duration::from_secs(5), || async {
        select_value::<bool>(&app.db, "SELECT to_regclass('call_log_y2026m07') IS NULL").await
    })
    .await;
    assert!(dropped, "the July table is still there");
    let left: Vec<String> = select_column(
        &app.db,
        "SELECT request_id FROM call_log ORDER BY request_id",
    )
    .await;
    assert_eq!(left, ["req_recent"]);
    // Only the default partition is read by time (its rows expire one by one and move
    // out by month); a month is read by key, and dropped whole.
    let indexed: Vec<(String, String)> = select_pairs(
        &app.db,
        "SELECT tablename, indexdef FROM pg_indexes \
         WHERE tablename LIKE 'call_log_%' ORDER BY tablename, indexdef",
    )
    .await;
    let by_time: Vec<&str> = indexed
        .iter()
        .filter(|(_, index)| index.ends_with("(called_at)"))
        .map(|(table, _)| table.as_str())
        .collect();
    assert_eq!(by_time, ["call_log_default"], "{indexed:?}");
    // Every table, months and default, finds a complaint's request id by index.
    let tables: std::collections::BTreeSet<&str> =
        indexed.iter().map(|(t, _)| t.as_str()).collect();
    for table in tables {
        assert!(
            (indexed.iter()).any(|(t, i)| t == table && i.ends_with("(request_id)")),
            "{table}: {indexed:?}"
        );
    }
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
