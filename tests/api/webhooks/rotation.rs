//! Secret rotation and recovery (D27): for a day after a rotation every message carries
//! the new and the old signature, each verified by the Standard Webhooks library; then
//! only the new one. A recovery sends again exactly the failed deliveries since the
//! instant given, and enables a disabled endpoint.

use std::time::Duration;

use chrono::Duration as Span;
use chrono::SecondsFormat;
use iq_actors::clock::Clock;

use super::delivery::{verify_with_standardwebhooks, BOTH};
use super::receiver::Receiver;
use crate::helpers::quotes::{every_base_on, import, spawn_for_imports};

#[actix_web::test]
async fn a_rotated_endpoint_is_signed_with_both_secrets_for_a_day() {
    let (app, _admin, _key) = spawn_for_imports().await;
    let member = app.member("rosa", "pro").await;
    let receiver = Receiver::start();
    let hook = app.new_webhook(&member, &receiver.url, &BOTH).await;
    let id = hook["id"].as_str().unwrap();
    let old = hook["secret"].as_str().unwrap().to_string();
    app.member("sten", "pro").await;

    let rotated = app.rotate_webhook_secret(&member, id).await;
    assert_eq!(rotated.code(), 0, "{}", rotated.body);
    assert_eq!(rotated.header("cache-control"), Some("no-store"));
    let new = rotated.data()["secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    assert!(
        rotated.data()["previous_until"].is_string(),
        "{}",
        rotated.body
    );

    assert_eq!(app.test_webhook(&member, id).await.code(), 0);
    let first = receiver.wait_for(1, Duration::from_secs(10)).await;
    let signatures: Vec<&str> = first[0].signature.split(' ').collect();
    assert_eq!(signatures.len(), 2, "{}", first[0].signature);
    verify_with_standardwebhooks(&new, &first);
    verify_with_standardwebhooks(&old, &first);

    // A day later only the new secret signs (the session has lapsed meanwhile).
    app.clock.advance(Span::hours(25));
    let member = app.login_ok("rosa").await;
    assert_eq!(app.test_webhook(&member, id).await.code(), 0);
    let both = receiver.wait_for(2, Duration::from_secs(10)).await;
    let later = &both[1..];
    assert_eq!(
        later[0].signature.split(' ').count(),
        1,
        "{}",
        later[0].signature
    );
    verify_with_standardwebhooks(&new, later);

    // Someone else's endpoint cannot be rotated.
    let stranger = app.login_ok("sten").await;
    app.rotate_webhook_secret(&stranger, id)
        .await
        .assert_error(404, 40401);
}

#[actix_web::test]
async fn recovery_sends_again_exactly_the_failed_deliveries_since_the_instant() {
    let (app, admin, _key) = spawn_for_imports().await;
    let member = app.member("remy", "pro").await;
    let receiver = Receiver::start();
    receiver.answer_with(500);
    let hook = app.new_webhook(&member, &receiver.url, &BOTH).await;
    let id = hook["id"].as_str().unwrap();
    app.member("sara", "pro").await;

    // Two imports two hours apart, every attempt failing, each import's deliveries
    // given up (as after the whole schedule) once their first attempts are recorded;
    // then the endpoint is disabled.
    let give_up = || async {
        let recorded = crate::helpers::eventually(Duration::from_secs(10), || async {
            let in_flight: i64 = crate::helpers::select_value(
                &app.db,
                "SELECT count(*) FROM webhook_deliveries WHERE locked_until IS NOT NULL",
            )
            .await;
            in_flight == 0
        })
        .await;
        assert!(recorded, "attempts still in flight");
        app.db
            .execute("UPDATE webhook_deliveries SET state = 'failed'", &[])
            .await
            .unwrap();
    };
    import(&app, &admin, "day1.csv", &every_base_on(&["20261109"])).await;
    let early = receiver.wait_for(7, Duration::from_secs(10)).await;
    give_up().await;
    app.clock.advance(Span::hours(2));
    // The sessions have lapsed meanwhile.
    let (admin, member) = (app.login_ok("root").await, app.login_ok("remy").await);
    let since = app.clock.now() - Span::minutes(1);
    import(&app, &admin, "day2.csv", &every_base_on(&["20261110"])).await;
    let all = receiver.wait_for(14, Duration::from_secs(10)).await;
    give_up().await;
    app.db
        .execute(
            "UPDATE webhooks SET disabled_at = $1, disabled_reason = 'every attempt failed'",
            &[&app.clock.now()],
        )
        .await
        .unwrap();
    let recent: Vec<String> = all
        .iter()
        .filter(|m| !early.iter().any(|e| e.id == m.id))
        .map(|m| m.id.clone())
        .collect();
    assert_eq!(recent.len(), 7, "{all:?}");

    receiver.answer_with(204);
    let since = since.to_rfc3339_opts(SecondsFormat::Secs, true);
    let recovered = app.recover_webhook(&member, id, &since).await;
    assert_eq!(recovered.code(), 0, "{}", recovered.body);
    assert_eq!(recovered.data()["requeued"], 7, "{}", recovered.body);
    let again = receiver.wait_for(21, Duration::from_secs(10)).await;
    let mut resent: Vec<String> = again[14..].iter().map(|m| m.id.clone()).collect();
    resent.sort();
    let mut expected = recent.clone();
    expected.sort();
    assert_eq!(
        resent, expected,
        "the failed deliveries since {since}, each once"
    );
    receiver
        .assert_no_more_than(
            21,
            Duration::from_secs(2),
            "a delivery before `since` was resent",
        )
        .await;
    let list = app.webhooks(&member).await;
    assert!(list.data()[0]["disabled_at"].is_null(), "{}", list.body);

    // Bad instants name the field; someone else's endpoint is 404.
    let week_ago = (app.clock.now() - Span::days(8)).to_rfc3339_opts(SecondsFormat::Secs, true);
    for bad in ["yesterday", "2026-11-20", week_ago.as_str()] {
        app.recover_webhook(&member, id, bad)
            .await
            .assert_error_mentioning(400, 40001, "since");
    }
    let stranger = app.login_ok("sara").await;
    app.recover_webhook(&stranger, id, &since)
        .await
        .assert_error(404, 40401);
}
