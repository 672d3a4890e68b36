//! `GET /api/v1/membership` with a key (D14): the key's owner, range, scopes and
//! expiry, and today's use against its effective limits, never counted; a refused key
//! gets a query's answer; without a key, the website identity and its protection.

use reqwest::Method;
use serde_json::json;

use crate::helpers::spawn_with_fixture;

#[actix_web::test]
async fn a_key_learns_its_owner_range_and_use_without_spending_a_call() {
    let (app, owner) = spawn_with_fixture().await.with_member("kim", "pro").await;
    let key = app
        .key_for_indexes(&owner, "laptop", &["GPU_Index", "Hardware_Index"])
        .await;
    for _ in 0..2 {
        let reply = app
            .query_with(json!({"api_name": "index_basic"}), Some(&key.key))
            .await;
        assert_eq!(reply.code(), 0);
    }
    let answer = app.membership_with(&key.key).await;
    assert_eq!(answer.code(), 0, "{}", answer.body);
    let data = answer.data();
    assert_eq!(data["identity"], "key");
    assert_eq!(data["user"]["username"], "kim");
    assert_eq!(data["tier"], "pro");
    assert_eq!(data["data_cutoff"], "20261120");
    // Visible to the key: its range, in display order.
    assert_eq!(data["indexes"], json!(["GPU_Index", "Hardware_Index"]));
    assert_eq!(data["key"]["id"], key.id.as_str());
    assert_eq!(data["key"]["name"], "laptop");
    assert_eq!(data["key"]["expires_at"], serde_json::Value::Null);
    assert_eq!(
        data["key"]["scopes"],
        json!(["index:read", "quote:read", "calendar:read"])
    );
    let quota = &data["quota"];
    assert_eq!(quota["used_day"], 2, "{quota}");
    assert_eq!(quota["used_minute"], 2, "{quota}");
    assert_eq!(
        quota["remaining_day"].as_i64().unwrap() + 2,
        quota["per_day"].as_i64().unwrap()
    );
    assert!(data.get("protection").is_none());
    // Asking again spends nothing.
    let again = crate::helpers::TestApp::reply(
        app.request(Method::GET, "/api/v1/membership")
            .header("Authorization", format!("Bearer {}", key.key))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(again.data()["quota"]["used_day"], 2);
}

#[actix_web::test]
async fn a_refused_key_gets_the_answer_a_query_would() {
    let app = spawn_with_fixture().await;
    let key = app.member_key("kim", "free").await;
    app.delete_key(&app.login_ok("kim").await, &key.id).await;
    let answer = app.membership_with(&key.key).await;
    answer.assert_error(401, 40102);
    let garbage = app.membership_with("iq_nope").await;
    garbage.assert_error(401, 40102);
}

#[actix_web::test]
async fn without_a_key_it_describes_the_website_identity_and_its_protection() {
    let app = spawn_with_fixture().await;
    let visitor = app.membership().await;
    assert_eq!(visitor.data()["identity"], "visitor");
    assert_eq!(visitor.data()["protection"]["per_minute"], 300);
    assert!(visitor.data()["quota"].get("used_day").is_none());
    assert!(visitor.data().get("key").is_none());
}
