//! Quota leases: without the database the keys holding a lease are served and the rest
//! get 50000 until it is back, and far from its limit a key is served a block of calls
//! on one lease.

use serde_json::json;

use super::call;
use crate::helpers::spawn_with_fixture;

#[actix_web::test]
async fn without_the_database_held_leases_serve_and_the_rest_get_50000() {
    let app = spawn_with_fixture().await;
    let leased = app.member_key("lee", "pro").await;
    let idle = app.member_key("ida", "pro").await;
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
    let key = app.member_key("bodil", "pro").await;
    let quota = app.quota.as_ref().expect("in-process instance");
    let before = quota.stats().await.unwrap();
    for _ in 0..200 {
        assert_eq!(call(&app, &key).await.code(), 0);
    }
    let after = quota.stats().await.unwrap();
    // 10000 a day: the first lease takes a quarter of it, for both windows at once.
    assert_eq!(after.leases - before.leases, 1);
    assert_eq!(after.admitted - before.admitted, 200);
}
