//! `PUT /api/v1/admin/calendar` (D7): both body forms, who may call it, its validation,
//! the refusal to close days holding quotes, and the delay cutoff following the change
//! on this instance at once and on another instance within moments.

use std::time::Duration;

use chrono::{Datelike, NaiveDate, Weekday};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{eventually, run_sql, spawn_with_fixture, TestApp};

const PATH: &str = "/api/v1/admin/calendar";

/// Every open day the `trade_calendar` dataset lists, `YYYYMMDD`.
async fn listed_days(app: &TestApp) -> Vec<String> {
    app.walk(json!({"api_name": "trade_calendar"}), 5000)
        .await
        .iter()
        .map(|row| row[0].as_str().unwrap().to_string())
        .collect()
}

/// The visitor's delay cutoff as `GET /api/v1/membership` reports it.
async fn cutoff(app: &TestApp) -> Value {
    let reply = app.membership().await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply.data()["data_cutoff"].clone()
}

/// Polls `app` until its cutoff is `want`; fails after two seconds.
async fn cutoff_becomes(app: &TestApp, want: &str) {
    let reached = || async { cutoff(app).await == json!(want) };
    assert!(
        eventually(Duration::from_secs(2), reached).await,
        "cutoff is still {} after 2 s; expected {want}",
        cutoff(app).await
    );
}

/// Weekdays from `from` to `to`, inclusive, minus `except`, as `YYYYMMDD`.
fn weekdays(from: (i32, u32, u32), to: (i32, u32, u32), except: &[&str]) -> Vec<String> {
    let from = NaiveDate::from_ymd_opt(from.0, from.1, from.2).unwrap();
    let to = NaiveDate::from_ymd_opt(to.0, to.1, to.2).unwrap();
    from.iter_days()
        .take_while(|d| *d <= to)
        .filter(|d| !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
        .map(|d| d.format("%Y%m%d").to_string())
        .filter(|d| !except.contains(&d.as_str()))
        .collect()
}

/// The fixture's calendar: November 2026 weekdays but the 16th.
fn fixture_days() -> Vec<String> {
    weekdays((2026, 11, 2), (2026, 11, 30), &["20261116"])
}

#[actix_web::test]
async fn a_list_replaces_the_whole_calendar() {
    let (app, root) = spawn_with_fixture().await.with_admin().await;
    assert_eq!(listed_days(&app).await, fixture_days());

    let days = [
        "20261201", "20261109", "20261110", "20261111", "20261112", "20261020",
    ];
    let reply = app.put_calendar(&root, json!({ "open_days": days })).await;
    assert_eq!((reply.status, reply.code()), (200, 0), "{}", reply.body);
    assert_eq!(
        reply.data(),
        &json!({"open_days": 6, "first": "20261020", "last": "20261201"})
    );

    let all = app.query(json!({"api_name": "trade_calendar"})).await;
    assert_eq!(
        all.items(),
        &vec![
            json!(["20261020", null]),
            json!(["20261109", "20261020"]),
            json!(["20261110", "20261109"]),
            json!(["20261111", "20261110"]),
            json!(["20261112", "20261111"]),
            json!(["20261201", "20261112"]),
        ]
    );
}

#[actix_web::test]
async fn a_year_range_rebuilds_those_years_and_keeps_the_others() {
    let (app, root) = spawn_with_fixture().await.with_admin().await;
    let admin = app.user_with_role(&root, "operator", "admin").await;

    // 2027 has 261 weekdays; 1 January is a Friday.
    let reply = app
        .put_calendar(
            &admin,
            json!({"from_year": 2027, "to_year": 2027, "holidays": ["20270101"]}),
        )
        .await;
    assert_eq!((reply.status, reply.code()), (200, 0), "{}", reply.body);
    assert_eq!(
        reply.data(),
        &json!({"open_days": 20 + 260, "first": "20261102", "last": "20271231"})
    );
    let around_new_year = app
        .query(json!({"api_name": "trade_calendar",
                      "params": {"start_date": "20261125", "end_date": "20270106"}}))
        .await;
    assert_eq!(
        around_new_year.items(),
        &vec![
            json!(["20261125", "20261124"]),
            json!(["20261126", "20261125"]),
            json!(["20261127", "20261126"]),
            json!(["20261130", "20261127"]),
            json!(["20270104", "20261130"]),
            json!(["20270105", "20270104"]),
            json!(["20270106", "20270105"]),
        ]
    );

    // Another weekend rule: Friday and Saturday closed, Sunday open, for 2026 only.
    let reply = app
        .put_calendar(
            &root,
            json!({"from_year": 2026, "to_year": 2026, "weekend": ["fri", "sat"]}),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let november = app
        .query(json!({"api_name": "trade_calendar",
                      "params": {"start_date": "20261119", "end_date": "20261124"}}))
        .await;
    assert_eq!(
        november.column("trade_date"),
        ["20261119", "20261122", "20261123", "20261124"]
    );
    // 2027 is untouched by a 2026 change.
    let listed = listed_days(&app).await;
    assert_eq!(listed.last().unwrap(), "20271231");
    assert_eq!(listed.iter().filter(|d| d.starts_with("2027")).count(), 260);
}

#[actix_web::test]
async fn a_twenty_year_list_fits_in_one_request() {
    let (app, root) = spawn_with_fixture().await.with_admin().await;
    let days = weekdays((2007, 1, 1), (2026, 12, 31), &[]);
    assert!(days.len() > 5000);
    let reply = app.put_calendar(&root, json!({ "open_days": days })).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.data()["open_days"], json!(days.len()));
    assert_eq!(listed_days(&app).await, days);
}

#[actix_web::test]
async fn only_admins_with_the_csrf_token_may_change_the_calendar() {
    let (app, root) = spawn_with_fixture().await.with_admin().await;
    let admin = app.user_with_role(&root, "operator", "admin").await;
    let user = app.user(&root, "alice", "pro").await;
    let body = json!({"open_days": ["20261109", "20261110", "20261111"]});

    app.put_calendar(&user, body.clone())
        .await
        .assert_error(403, 40301);
    for session in [&root, &admin] {
        app.call(Method::PUT, PATH, Some(body.clone()), Some(session), false)
            .await
            .assert_error(403, 40301);
    }
    app.call(Method::PUT, PATH, Some(body.clone()), None, false)
        .await
        .assert_error(401, 40101);
    // The guard comes before the body: a bad body from a user is still 403.
    app.put_calendar(&user, json!({"bogus": true}))
        .await
        .assert_error(403, 40301);
    assert_eq!(listed_days(&app).await, fixture_days());

    // Both administrator roles may.
    for (session, day) in [(&root, "20261112"), (&admin, "20261113")] {
        let mut days = vec!["20261109", "20261110", "20261111"];
        days.push(day);
        let reply = app
            .put_calendar(session, json!({ "open_days": days }))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        assert_eq!(listed_days(&app).await, days);
    }
}

#[actix_web::test]
async fn every_body_mistake_is_40001_naming_the_culprit() {
    let (app, root) = spawn_with_fixture().await.with_admin().await;
    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["open_days", "from_year"]),
        (json!({"open_dayz": ["20261109"]}), &["open_dayz"]),
        (
            json!({"from_year": 2026, "to_year": 2026, "holiday": []}),
            &["holiday"],
        ),
        (
            json!({"open_days": ["20261109"], "from_year": 2026, "to_year": 2026}),
            &["not both", "from_year"],
        ),
        (json!({"open_days": []}), &["open_days", "at least one"]),
        (
            json!({"open_days": ["20261109", "2026-11-10"]}),
            &["open_days[1]", "2026-11-10"],
        ),
        (
            json!({"open_days": ["20261109", 20261110]}),
            &["open_days[1]", "20261110"],
        ),
        (json!({"open_days": "20261109"}), &["open_days"]),
        (
            json!({"open_days": ["20261131"]}),
            &["open_days[0]", "20261131"],
        ),
        (
            json!({"open_days": ["20261109", "20261109"]}),
            &["open_days[1]", "20261109", "more than once"],
        ),
        (json!({"open_days": ["18991231"]}), &["18991231"]),
        (json!({"from_year": 2026}), &["to_year"]),
        (json!({"holidays": ["20261225"]}), &["from_year"]),
        (
            json!({"from_year": 1989, "to_year": 2026}),
            &["from_year", "1989"],
        ),
        (
            json!({"from_year": 2026, "to_year": 2101}),
            &["to_year", "2101"],
        ),
        (
            json!({"from_year": "2026", "to_year": 2026}),
            &["from_year"],
        ),
        (
            json!({"from_year": 2027, "to_year": 2026}),
            &["from_year", "to_year"],
        ),
        (
            json!({"from_year": 2000, "to_year": 2060}),
            &["61 years", "50"],
        ),
        (
            json!({"from_year": 2026, "to_year": 2026, "holidays": ["20270101"]}),
            &["holidays[0]", "20270101", "outside"],
        ),
        (
            json!({"from_year": 2026, "to_year": 2026, "holidays": ["20261225", "2026/12/26"]}),
            &["holidays[1]", "2026/12/26"],
        ),
        (
            json!({"from_year": 2026, "to_year": 2026, "weekend": ["sat", "Sun"]}),
            &["weekend[1]", "Sun"],
        ),
        (
            json!({"from_year": 2026, "to_year": 2026,
                   "weekend": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]}),
            &["weekend", "every day"],
        ),
    ];
    for (body, words) in cases {
        let reply = app.put_calendar(&root, body.clone()).await;
        reply.assert_error(400, 40001);
        for word in words {
            assert!(
                reply.message().contains(word),
                "{body}: '{}' does not name {word}",
                reply.message()
            );
        }
    }
    let not_json = app
        .request(Method::PUT, PATH)
        .header("Cookie", &root.cookie)
        .header("X-CSRF-Token", &root.csrf)
        .header("Content-Type", "application/json")
        .body("{\"open_days\": [")
        .send()
        .await
        .unwrap();
    TestApp::reply(not_json).await.assert_error(400, 40001);
    assert_eq!(listed_days(&app).await, fixture_days());
}

#[actix_web::test]
async fn closing_a_day_with_quotes_is_409_and_changes_nothing() {
    let (app, root) = spawn_with_fixture().await.with_admin().await;
    let before = cutoff(&app).await;

    // Quotes on the 10th and 11th, daily rows on the 9th to 11th.
    let keep_none = fixture_days()
        .into_iter()
        .filter(|d| !["20261109", "20261110", "20261111"].contains(&d.as_str()))
        .collect::<Vec<_>>();
    let reply = app
        .put_calendar(&root, json!({ "open_days": keep_none }))
        .await;
    reply.assert_error(409, 40901);
    assert_eq!(
        reply.message(),
        "cannot close 2026-11-09, 2026-11-10, 2026-11-11: quotes exist on them; \
         re-import or delete them first"
    );

    let holiday = app
        .put_calendar(
            &root,
            json!({"from_year": 2026, "to_year": 2026, "holidays": ["20261110"]}),
        )
        .await;
    holiday.assert_error(409, 40901);
    assert!(
        holiday.message().starts_with("cannot close 2026-11-10:"),
        "{}",
        holiday.body
    );
    let weekend = app
        .put_calendar(
            &root,
            json!({"from_year": 2026, "to_year": 2026, "weekend": ["mon", "sat", "sun"]}),
        )
        .await;
    weekend.assert_error_mentioning(409, 40901, "2026-11-09");

    // Many blocked days: ten are named, the rest counted.
    run_sql(
        &app.db,
        "INSERT INTO index_daily (trade_date, index_code, index_value) \
             SELECT trade_date, 'CPU_Index', 1000 FROM trade_calendar",
    )
    .await;
    let reply = app
        .put_calendar(&root, json!({"open_days": ["20261201"]}))
        .await;
    reply.assert_error(409, 40901);
    assert!(
        reply.message().starts_with(
            "cannot close 2026-11-02, 2026-11-03, 2026-11-04, 2026-11-05, 2026-11-06, \
             2026-11-09, 2026-11-10, 2026-11-11, 2026-11-12, 2026-11-13 and 10 more: "
        ),
        "{}",
        reply.body
    );

    assert_eq!(listed_days(&app).await, fixture_days());
    assert_eq!(cutoff(&app).await, before);
}

#[actix_web::test]
async fn the_delay_cutoff_follows_at_once_here_and_soon_on_another_instance() {
    let app = spawn_with_fixture().await;
    let other = app.another_instance().await;
    let root = app.admin().await;
    // Both instances have the fixture's cutoff cached: 7 open days before Fri 20 Nov.
    assert_eq!(cutoff(&app).await, json!("20261110"));
    assert_eq!(cutoff(&other).await, json!("20261110"));
    let daily = json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}});
    assert_eq!(
        app.query(daily.clone()).await.column("trade_date"),
        [json!("20261109"), json!("20261110")]
    );

    // Closing Tuesday 17 Nov as well moves the cutoff a day back, to Mon 9 Nov.
    let reply = app
        .put_calendar(
            &root,
            json!({"from_year": 2026, "to_year": 2026, "holidays": ["20261116", "20261117"]}),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(cutoff(&app).await, json!("20261109"));
    assert_eq!(
        app.query(daily.clone()).await.column("trade_date"),
        [json!("20261109")],
        "cached pages were dropped"
    );
    cutoff_becomes(&other, "20261109").await;

    // Opening Monday 16 and Tuesday 17 Nov moves it forward to Wed 11 Nov.
    let november = weekdays((2026, 11, 2), (2026, 11, 30), &[]);
    let reply = app
        .put_calendar(&root, json!({ "open_days": november }))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(cutoff(&app).await, json!("20261111"));
    assert_eq!(app.query(daily.clone()).await.items().len(), 3);
    cutoff_becomes(&other, "20261111").await;
    assert_eq!(other.query(daily).await.items().len(), 3);
}
