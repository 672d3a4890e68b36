//! Tiers: the seeded defaults and changes.

use super::*;

#[actix_web::test]
async fn tiers_list_the_seeded_defaults() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let mut free = free_defaults();
    free["tier"] = json!("free");
    assert_eq!(app.tier(&admin, "free").await, free);
    assert_eq!(
        app.tier(&admin, "pro").await,
        json!({"tier": "pro", "per_minute": 10000, "per_day": 10000, "max_rows": 5000,
               "max_keys": null, "delay_days": 0, "member_indexes": true, "max_webhooks": 10})
    );
    let listed = app.get_as(&admin, "/api/v1/admin/tiers").await;
    assert_eq!(
        listed.data().as_array().map(Vec::len),
        Some(2),
        "{}",
        listed.body
    );
}

#[actix_web::test]
async fn raising_max_keys_lets_a_free_user_hold_two_keys() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    app.new_key(&carol, json!({"name": "one"})).await;
    app.create_key(&carol, json!({"name": "two"}))
        .await
        .assert_error(409, 40901);

    let mut body = free_defaults();
    body["max_keys"] = json!(2);
    // `max_webhooks` may be left out (D22 came after D7's list): it keeps its value.
    body.as_object_mut().unwrap().remove("max_webhooks");
    let put = app.put_tier(&admin, "free", body).await;
    assert_eq!(put.code(), 0, "{}", put.body);
    assert_eq!(put.data()["max_keys"], 2);
    assert_eq!(put.data()["max_webhooks"], 1);

    app.new_key(&carol, json!({"name": "two"})).await;
    app.create_key(&carol, json!({"name": "three"}))
        .await
        .assert_error(409, 40901);
    assert_eq!(
        app.list_keys(&carol).await.data().as_array().unwrap().len(),
        2
    );
    assert_eq!(
        app.membership_as(&carol).await.data()["quota"]["max_keys"],
        2
    );
}

#[actix_web::test]
async fn a_tier_delay_change_shows_in_membership_at_once() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    assert_eq!(app.membership_as(&carol).await.data()["delay_days"], 7);
    assert_eq!(app.membership().await.data()["delay_days"], 7);

    let mut body = free_defaults();
    body["delay_days"] = json!(0);
    let put = app.put_tier(&admin, "free", body).await;
    assert_eq!(put.code(), 0, "{}", put.body);

    let reply = app.membership_as(&carol).await;
    assert_eq!(reply.data()["delay_days"], 0, "{}", reply.body);
    assert_eq!(app.membership().await.data()["delay_days"], 0);
}

#[actix_web::test]
async fn tier_changes_are_validated() {
    let (app, admin) = spawn_app().await.with_admin().await;

    app.put_tier(&admin, "gold", free_defaults())
        .await
        .assert_error(404, 40401);

    let mut zero_rows = free_defaults();
    zero_rows["max_rows"] = json!(0);
    let reply = app.put_tier(&admin, "free", zero_rows).await;
    reply.assert_error_mentioning(400, 40001, "max_rows");

    let mut negative = free_defaults();
    negative["per_day"] = json!(-1);
    app.put_tier(&admin, "free", negative)
        .await
        .assert_error(400, 40001);

    let mut extra = free_defaults();
    extra["colour"] = json!("red");
    let reply = app.put_tier(&admin, "free", extra).await;
    reply.assert_error_mentioning(400, 40001, "colour");

    for field in [
        "per_minute",
        "per_day",
        "max_rows",
        "delay_days",
        "member_indexes",
    ] {
        let mut missing = free_defaults();
        missing.as_object_mut().unwrap().remove(field);
        let reply = app.put_tier(&admin, "free", missing).await;
        reply.assert_status_code(400, 40001, format_args!("without {field}"));
        assert!(reply.message().contains(field), "{}", reply.body);
    }

    // Nothing changed.
    let tiers = app.get_as(&admin, "/api/v1/admin/tiers").await;
    let mut free = free_defaults();
    free["tier"] = json!("free");
    assert!(
        tiers.data().as_array().unwrap().contains(&free),
        "{}",
        tiers.body
    );
}

#[actix_web::test]
async fn a_tier_put_without_max_keys_is_refused() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let mut missing = free_defaults();
    missing.as_object_mut().unwrap().remove("max_keys");
    let reply = app.put_tier(&admin, "free", missing).await;
    reply.assert_error_mentioning(400, 40001, "max_keys");
    // The free tier still allows one key.
    assert_eq!(app.tier(&admin, "free").await["max_keys"], 1);
}
