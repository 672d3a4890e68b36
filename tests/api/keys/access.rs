//! What a caller sees (D4): a key's scopes and index range (steps 5 and 6), member
//! indexes by the owner's tier, every field and the tier's delay; and a session cookie,
//! which gives its account's tier until it is logged out.

use reqwest::Method;
use serde_json::{json, Value};

use super::daily;
use crate::helpers::spawn_with_fixture;

#[actix_web::test]
async fn scopes_and_index_range_are_steps_5_and_6() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let key = app.key_of_tier(&admin, "alice", "free").await;
    app.patch_key(
        &admin,
        &key,
        json!({"scopes": ["index:read"], "index_codes": ["GPU_Index", "SSD_Index"]}),
    )
    .await;
    let quote = json!({"api_name": "index_quote", "params": {"index_code": "GPU_Index"}});
    app.query_with(quote, Some(&key.key))
        .await
        .assert_error(403, 40301);
    app.query_with(json!({"api_name": "trade_calendar"}), Some(&key.key))
        .await
        .assert_error(403, 40301);
    let outside = app.query_with(daily("Server_Index"), Some(&key.key)).await;
    outside.assert_error(403, 40302);
    assert!(outside.message().contains("Server_Index"));
    // Without index_code the range filters instead of refusing.
    let all = app
        .query_with(json!({"api_name": "index_daily"}), Some(&key.key))
        .await;
    let mut codes: Vec<String> = all
        .column("index_code")
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes, [json!("GPU_Index"), json!("SSD_Index")]);
    let basic = app
        .query_with(json!({"api_name": "index_basic"}), Some(&key.key))
        .await;
    assert_eq!(
        basic.column("index_code"),
        [json!("GPU_Index"), json!("SSD_Index")]
    );
}

#[actix_web::test]
async fn member_indexes_follow_the_owners_tier() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let free = app.key_of_tier(&admin, "freddy", "free").await;
    let pro = app.key_of_tier(&admin, "petra", "pro").await;
    // Step 8 comes after the range (step 6): a free key with the member index in range.
    app.patch_key(
        &admin,
        &free,
        json!({"index_codes": ["Hardware_Index", "GPU_Index"]}),
    )
    .await;
    app.query_with(daily("Hardware_Index"), Some(&free.key))
        .await
        .assert_error(403, 40301);
    let all = app
        .query_with(json!({"api_name": "index_daily"}), Some(&free.key))
        .await;
    assert!(all.column("index_code").iter().all(|c| c == "GPU_Index"));
    let pro_rows = app
        .query_with(daily("Hardware_Index"), Some(&pro.key))
        .await;
    assert_eq!(
        pro_rows.column("trade_date"),
        [json!("20261109"), json!("20261110")]
    );
}

#[actix_web::test]
async fn a_key_sees_every_field_and_its_tiers_delay() {
    let app = spawn_with_fixture().await;
    let free = app.member_key("freddy", "free").await;
    let pro = app.member_key("petra", "pro").await;

    // An index_only index: the visitor gets no weighted price and no quotes; a key does.
    let visitor = app.query(daily("GPU_Index")).await;
    assert!(visitor.column("weighted_price").iter().all(Value::is_null));
    let keyed = app.query_with(daily("GPU_Index"), Some(&free.key)).await;
    assert_eq!(
        keyed.column("weighted_price"),
        [json!("30000.000000"), json!("29700.000000")]
    );
    let quote = json!({"api_name": "index_quote", "params": {"index_code": "GPU_Index"}});
    app.query(quote.clone()).await.assert_error(403, 40301);
    let quotes = app.query_with(quote, Some(&free.key)).await;
    assert_eq!(quotes.column("specification"), [json!("H100 SXM5 80GB")]);

    // Delay: the free tier stops at 10 Nov; the professional tier sees 11 Nov too.
    let server = daily("Server_Index");
    let free_dates = app.query_with(server.clone(), Some(&free.key)).await;
    assert_eq!(
        free_dates.column("trade_date"),
        [json!("20261109"), json!("20261110")]
    );
    let pro_dates = app.query_with(server, Some(&pro.key)).await;
    assert_eq!(pro_dates.column("trade_date").len(), 3);
}

#[actix_web::test]
async fn a_session_cookie_gives_the_accounts_tier_and_a_stale_one_the_visitor() {
    let (app, petra) = spawn_with_fixture().await.with_member("petra", "pro").await;
    let as_petra = |body: Value| {
        let app = &app;
        let petra = petra.clone();
        async move {
            app.send_without_csrf(&petra, Method::POST, "/api/v1/query", Some(body))
                .await
        }
    };
    // Professional session: the member index and no delay, but website field rules.
    let member = as_petra(daily("Hardware_Index")).await;
    assert_eq!(member.column("trade_date").len(), 2, "{}", member.body);
    let gpu = as_petra(daily("GPU_Index")).await;
    assert!(gpu.column("weighted_price").iter().all(Value::is_null));
    let server = as_petra(daily("Server_Index")).await;
    assert_eq!(server.column("trade_date").len(), 3);

    // A logged-out cookie is simply the visitor on the query path.
    app.send_as(&petra, Method::POST, "/api/v1/auth/logout", json!({}))
        .await;
    as_petra(daily("Hardware_Index"))
        .await
        .assert_error(403, 40301);
    let visitor = as_petra(daily("Server_Index")).await;
    assert_eq!(visitor.column("trade_date").len(), 2);
}
