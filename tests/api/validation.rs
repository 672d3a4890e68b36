//! Every row of decisions D1: HTTP 400, code 40001, and a message naming the culprit.

use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_with, Spawn};

async fn assert_invalid(app: &crate::helpers::TestApp, body: Value, names: &str) {
    let reply = app.query(body.clone()).await;
    reply.assert_error(400, 40001);
    assert!(
        reply.message().contains(names),
        "{body} -> {}",
        reply.message()
    );
}

#[actix_web::test]
async fn params_may_be_omitted_or_null() {
    let app = spawn_app().await;
    for body in [
        json!({"api_name": "index_basic"}),
        json!({"api_name": "index_basic", "params": null}),
    ] {
        assert_eq!(app.query(body).await.code(), 0);
    }
}

#[actix_web::test]
async fn bodies_that_are_not_json_objects_are_refused() {
    let app = spawn_app().await;
    app.query_raw("{not json", "application/json")
        .await
        .assert_error(400, 40001);
    app.query_raw("[1, 2]", "application/json")
        .await
        .assert_error(400, 40001);
    app.query_raw("", "application/json")
        .await
        .assert_error(400, 40001);
    let wrong_type = app
        .query_raw(r#"{"api_name": "index_basic"}"#, "text/plain")
        .await;
    wrong_type.assert_error(400, 40001);
    assert!(wrong_type.message().contains("Content-Type"));
    let charset = app
        .query_raw(
            r#"{"api_name": "index_basic"}"#,
            "application/json; charset=utf-8",
        )
        .await;
    assert_eq!(charset.code(), 0);
    let huge = format!(
        r#"{{"api_name": "index_basic", "x": "{}"}}"#,
        "a".repeat(100_000)
    );
    app.query_raw(huge, "application/json")
        .await
        .assert_error(400, 40001);
}

#[actix_web::test]
async fn api_name_and_top_level_keys_are_checked() {
    let app = spawn_app().await;
    for (body, names) in [
        (json!({}), "api_name"),
        (json!({"api_name": "index_hourly"}), "index_hourly"),
        (json!({"api_name": 7}), "api_name"),
        (json!({"api_name": "index_basic", "filter": {}}), "filter"),
        (json!({"api_name": "index_basic", "params": []}), "params"),
    ] {
        assert_invalid(&app, body, names).await;
    }
}

#[actix_web::test]
async fn parameters_must_be_known_non_empty_strings() {
    let app = spawn_app().await;
    for (api_name, params, names) in [
        (
            "index_basic",
            json!({"trade_date": "20261110"}),
            "trade_date",
        ),
        ("index_daily", json!({"index_code": ""}), "index_code"),
        ("index_daily", json!({"index_code": 1}), "index_code"),
        ("index_daily", json!({"index_code": null}), "index_code"),
        (
            "index_quote",
            json!({"specification": "a\u{0}b"}),
            "specification",
        ),
    ] {
        let body = json!({"api_name": api_name, "params": params});
        assert_invalid(&app, body, names).await;
    }
}

#[actix_web::test]
async fn limit_and_offset_must_be_integers_in_range() {
    let app = spawn_app().await;
    for limit in [json!(0), json!(-5), json!(1.5), json!("10"), json!(true)] {
        assert_invalid(
            &app,
            json!({"api_name": "index_basic", "limit": limit}),
            "limit",
        )
        .await;
    }
    for offset in [json!(-1), json!(0.5), json!("0"), json!(u64::MAX)] {
        assert_invalid(
            &app,
            json!({"api_name": "index_basic", "offset": offset}),
            "offset",
        )
        .await;
    }
}

#[actix_web::test]
async fn a_limit_above_the_server_maximum_is_reduced() {
    let app = spawn_app().await;
    let reply = app
        .query(json!({"api_name": "index_basic", "limit": 1_000_000}))
        .await;
    assert_eq!(
        (reply.code(), reply.data()["limit"].clone()),
        (0, json!(5000))
    );

    let capped = spawn_with(Spawn::default().tuned(|s| s.site.max_limit = 3)).await;
    let reply = capped
        .query(json!({"api_name": "index_basic", "limit": 5000}))
        .await;
    assert_eq!(reply.data()["limit"], json!(3));
    assert_eq!(reply.data()["returned"], json!(3));
    assert_eq!(reply.data()["has_more"], json!(true));
    assert_eq!(capped.config().await.data()["max_limit"], json!(3));
}

#[actix_web::test]
async fn dates_must_be_real_and_well_formed() {
    let app = spawn_app().await;
    for date in [
        "2026-02-30",
        "20261301",
        "2026/11/10",
        "261110",
        "2026-1-10",
        "20261110 ",
    ] {
        assert_invalid(
            &app,
            json!({"api_name": "index_daily", "params": {"trade_date": date}}),
            "trade_date",
        )
        .await;
    }
    for date in ["20261110", "2026-11-10"] {
        let reply = app
            .query(json!({"api_name": "index_daily", "params": {"trade_date": date}}))
            .await;
        assert_eq!(reply.code(), 0, "{date}");
    }
}

#[actix_web::test]
async fn date_ranges_are_checked() {
    let app = spawn_app().await;
    let body = json!({"api_name": "index_daily", "params": {"start_date": "20261111", "end_date": "20261110"}});
    assert_invalid(&app, body, "start_date").await;
    let body = json!({"api_name": "index_quote", "params": {"trade_date": "20261110", "start_date": "20261101"}});
    assert_invalid(&app, body, "trade_date").await;
    let same_day = json!({"api_name": "index_daily", "params": {"start_date": "20261110", "end_date": "2026-11-10"}});
    assert_eq!(app.query(same_day).await.code(), 0);
}

#[actix_web::test]
async fn fields_must_belong_to_the_dataset_and_appear_once() {
    let app = spawn_app().await;
    assert_invalid(
        &app,
        json!({"api_name": "index_daily", "fields": ["index_value", "index_value"]}),
        "index_value",
    )
    .await;
    assert_invalid(
        &app,
        json!({"api_name": "index_daily", "fields": ["specification"]}),
        "specification",
    )
    .await;
    assert_invalid(
        &app,
        json!({"api_name": "index_daily", "fields": ["nope"]}),
        "nope",
    )
    .await;
    assert_invalid(
        &app,
        json!({"api_name": "index_daily", "fields": "trade_date"}),
        "fields",
    )
    .await;
    assert_invalid(
        &app,
        json!({"api_name": "index_daily", "fields": [1]}),
        "fields",
    )
    .await;
    let empty = app
        .query(json!({"api_name": "trade_calendar", "fields": []}))
        .await;
    assert_eq!(empty.fields(), ["trade_date", "pretrade_date"]);
}

#[actix_web::test]
async fn a_bad_key_wins_over_a_bad_body() {
    let app = spawn_app().await;
    let reply = app
        .query_with(json!({"api_name": "nope", "limit": 0}), Some("iq_bad"))
        .await;
    reply.assert_error(401, 40102);
}
