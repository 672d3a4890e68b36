//! Fair delivery (D27): a member whose endpoints never answer holds only their own
//! attempts, at most four in flight an endpoint, and never delays another member's
//! delivery by more than two seconds; two instances under load send no attempt twice;
//! a test message is sent once, never retried, and an account sends at most five a
//! minute.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::Duration as Span;

use super::receiver::Receiver;
use crate::helpers::quotes::{every_base_on, import, spawn_for_imports};

use super::delivery::BOTH;

#[actix_web::test]
async fn ten_silent_endpoints_of_one_member_do_not_hold_up_another_members_delivery() {
    let (app, admin, _key) = spawn_for_imports().await;
    let hanging = app.member("hana", "pro").await;
    let other = app.member("otto", "pro").await;
    let silent = Receiver::start();
    silent.go_silent();
    for n in 0..10 {
        let url = format!("{}?endpoint={n}", silent.url);
        app.new_webhook(&hanging, &url, &BOTH).await;
    }
    let receiver = Receiver::start();
    app.new_webhook(&other, &receiver.url, &BOTH).await;

    // Seven events (six bases and the composite) for each of the eleven endpoints.
    import(&app, &admin, "day1.csv", &every_base_on(&["20261109"])).await;
    receiver.wait_for(7, Duration::from_secs(10)).await;
    // Each silent endpoint holds exactly four attempts, and no more while they hang.
    let held = crate::helpers::eventually(Duration::from_secs(5), || async {
        silent.received().len() >= 40
    })
    .await;
    assert!(
        held,
        "{} attempts reached the silent endpoints",
        silent.received().len()
    );
    silent
        .assert_no_more_than(
            40,
            Duration::from_secs(2),
            "more than 4 attempts in flight to an endpoint",
        )
        .await;
    let mut per_endpoint = BTreeMap::new();
    for message in silent.received() {
        *per_endpoint.entry(message.query).or_insert(0) += 1;
    }
    assert!(per_endpoint.values().all(|&n| n == 4), "{per_endpoint:?}");

    // While those forty attempts hang, the other member's next events arrive within
    // two seconds of the import's answer.
    import(&app, &admin, "day2.csv", &every_base_on(&["20261110"])).await;
    let imported = Instant::now();
    receiver.wait_for(14, Duration::from_secs(10)).await;
    let waited = imported.elapsed();
    assert!(
        waited < Duration::from_secs(2),
        "the other member's delivery took {waited:?} while silent endpoints hung"
    );
}

#[actix_web::test]
async fn a_test_message_is_sent_once_and_an_account_sends_five_a_minute() {
    let (app, _admin, _key) = spawn_for_imports().await;
    let member = app.member("tess", "pro").await;
    let receiver = Receiver::start();
    receiver.answer_with(500);
    let hook = app.new_webhook(&member, &receiver.url, &BOTH).await;
    let id = hook["id"].as_str().unwrap();

    assert_eq!(app.test_webhook(&member, id).await.code(), 0);
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let failed = crate::helpers::eventually(Duration::from_secs(10), || async {
        app.webhook_deliveries(&member, id).await.data()[0]["state"] == "failed"
    })
    .await;
    assert!(failed, "{}", app.webhook_deliveries(&member, id).await.body);
    // Past the first retry's wait: nothing more comes.
    app.clock.advance(Span::seconds(10));
    receiver
        .assert_no_more_than(1, Duration::from_secs(3), "a test message was retried")
        .await;

    // Four more within the minute are queued; the sixth is refused, saying when.
    for _ in 0..4 {
        assert_eq!(app.test_webhook(&member, id).await.code(), 0);
    }
    let refused = app.test_webhook(&member, id).await;
    refused.assert_error_mentioning(429, 42901, "5 test messages a minute");
    let retry: i64 = refused
        .header("retry-after")
        .expect("Retry-After on the refusal")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "Retry-After: {retry}");
    // A minute later the account may test again.
    app.clock.advance(Span::seconds(61));
    assert_eq!(app.test_webhook(&member, id).await.code(), 0);
}

#[actix_web::test]
async fn two_instances_under_load_send_no_attempt_twice() {
    let (app, admin, _key) = spawn_for_imports().await;
    let _other = app.another_instance().await;
    let receiver = Receiver::start();
    // Slow answers keep many attempts in flight on both instances at once.
    receiver.answer_slowly(Duration::from_millis(300));
    let mut endpoints = 0;
    for member in ["una", "ugo", "ulla"] {
        let session = app.member(member, "pro").await;
        for n in 0..10 {
            let url = format!("{}?{member}={n}", receiver.url);
            app.new_webhook(&session, &url, &BOTH).await;
            endpoints += 1;
        }
    }
    // Two days of every base: 7 events each, to each of the 30 endpoints.
    import(
        &app,
        &admin,
        "days.csv",
        &every_base_on(&["20261109", "20261110"]),
    )
    .await;
    let expected = endpoints * 7;
    receiver.wait_for(expected, Duration::from_secs(60)).await;
    receiver
        .assert_no_more_than(expected, Duration::from_secs(3), "an attempt sent twice")
        .await;
    let mut seen = BTreeMap::new();
    for message in receiver.received() {
        *seen.entry((message.query, message.id)).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), expected, "each (endpoint, event) once");
    assert!(seen.values().all(|&n| n == 1), "{seen:?}");
}
