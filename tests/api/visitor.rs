//! The visitor identity (no key, no session): free-tier visibility and delay (D4, D5).

use serde_json::json;

use crate::helpers::{spawn_with_fixture, spawn_with_fixture_then};

#[actix_web::test]
async fn a_named_member_index_is_refused_and_an_omitted_one_filtered() {
    let app = spawn_with_fixture().await;
    for api_name in ["index_basic", "index_daily", "index_latest"] {
        let reply = app
            .query(json!({"api_name": api_name, "params": {"index_code": "Hardware_Index"}}))
            .await;
        reply.assert_error(403, 40301);
        assert!(reply.message().contains("Hardware_Index"));
    }
    let all = app.query(json!({"api_name": "index_daily"})).await;
    assert!(!all.column("index_code").contains(&json!("Hardware_Index")));
}

#[actix_web::test]
async fn quotes_of_index_only_indexes_are_refused_when_named_and_filtered_when_omitted() {
    let app = spawn_with_fixture().await;
    let named = app
        .query(json!({"api_name": "index_quote", "params": {"index_code": "GPU_Index"}}))
        .await;
    named.assert_error(403, 40301);
    let omitted = app.query(json!({"api_name": "index_quote"})).await;
    assert!(omitted
        .column("index_code")
        .iter()
        .all(|c| c == "Server_Index"));
    // Index points of the same index are public.
    let daily = app
        .query(json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"}}))
        .await;
    assert_eq!(
        daily.column("index_value"),
        [json!("1000.000000"), json!("990.000000")]
    );
    assert_eq!(daily.column("weighted_price"), [json!(null), json!(null)]);
}

#[actix_web::test]
async fn private_indexes_are_never_returned() {
    let app = spawn_with_fixture_then(
        "UPDATE indexes SET visibility = 'private' WHERE index_code = 'SSD_Index'",
    )
    .await;
    let basic = app.query(json!({"api_name": "index_basic"})).await;
    assert!(!basic.column("index_code").contains(&json!("SSD_Index")));
    let named = app
        .query(json!({"api_name": "index_daily", "params": {"index_code": "SSD_Index"}}))
        .await;
    assert_eq!(
        (named.status, named.code(), named.items().len()),
        (200, 0, 0)
    );
    let membership = app.membership().await;
    assert!(!membership.data()["indexes"]
        .as_array()
        .unwrap()
        .contains(&json!("SSD_Index")));
}

#[actix_web::test]
async fn rows_after_the_delay_cutoff_are_silently_omitted() {
    let app = spawn_with_fixture().await;
    // Cutoff for the free tier at the test clock: 10 Nov (see FIXTURE).
    let daily = app
        .query(json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}}))
        .await;
    assert_eq!(
        daily.column("trade_date"),
        [json!("20261109"), json!("20261110")]
    );
    let beyond = app
        .query(json!({"api_name": "index_quote", "params": {"trade_date": "20261111"}}))
        .await;
    assert_eq!(
        (beyond.status, beyond.code(), beyond.items().len()),
        (200, 0, 0)
    );

    // One open day later the 11 Nov rows appear (the cache is keyed by the cutoff).
    app.clock.advance(chrono::Duration::days(3)); // Monday 23 Nov
    let daily = app
        .query(json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}}))
        .await;
    assert_eq!(
        daily.column("trade_date").last().unwrap(),
        &json!("20261111")
    );
}

#[actix_web::test]
async fn the_delay_follows_the_tier_setting() {
    let app = spawn_with_fixture_then("UPDATE tiers SET delay_days = 0 WHERE tier = 'free'").await;
    let daily = app
        .query(json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}}))
        .await;
    assert_eq!(daily.items().len(), 3);
    assert_eq!(
        app.membership().await.data()["data_cutoff"],
        json!("20261120")
    );
}

#[actix_web::test]
async fn membership_and_config_describe_the_visitor() {
    let app = spawn_with_fixture().await;
    let membership = app.membership().await;
    assert_eq!(membership.code(), 0);
    assert_eq!(
        membership.data(),
        &json!({
            "identity": "visitor",
            "user": null,
            "tier": "free",
            "delay_days": 7,
            "data_cutoff": "20261110",
            "indexes": ["Server_Index", "Server_Rental_Index", "GPU_Index", "DRAM_Index", "SSD_Index", "CPU_Index", "OI_Index"],
            "quota": {"per_minute": 10, "per_day": 10, "max_keys": 1, "max_rows": 5000},
            "protection": {"per_minute": 300}
        })
    );
    let config = app.config().await;
    assert_eq!(
        config.data(),
        &json!({
            "site_name": "Test Index",
            "initialized": false,
            "api_version": "v1",
            "datasets": ["index_basic", "index_daily", "index_weekly", "index_monthly", "index_latest", "index_quote", "index_revisions", "trade_calendar"],
            "max_limit": 5000,
            "login": {"max_failures_per_minute": 5}
        })
    );
}

#[actix_web::test]
async fn a_key_header_never_falls_back_to_the_visitor() {
    let app = spawn_with_fixture().await;
    for key in ["", "iq_notarealkey", "garbage"] {
        let reply = app
            .query_with(json!({"api_name": "index_basic"}), Some(key))
            .await;
        reply.assert_error(401, 40102);
    }
}
