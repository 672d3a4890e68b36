//! Tushare's wire (D24), as the official SDK speaks it (its own package drives it in
//! `tushare_sdk.rs`): the answers' columns, numbers and order, the same values as the
//! native API's, several codes in any letter case, and every refusal an HTTP 200 with
//! the service's code and a message naming what was wrong.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::helpers::quotes::{every_base_on, import, spawn_for_imports};
use crate::helpers::{Key, Reply, TestApp};

const DAYS: [&str; 4] = ["20261109", "20261110", "20261111", "20261112"];

async fn with_quotes() -> (TestApp, Key, Key) {
    let (app, admin, pro) = spawn_for_imports().await;
    import(&app, &admin, "quotes.csv", &every_base_on(&DAYS)).await;
    let free = app.key_of_tier(&admin, "fred", "free").await;
    (app, pro, free)
}

fn refused(reply: &Reply, code: i64, naming: &str) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.code(), code, "{}", reply.body);
    let msg = reply.body["msg"].as_str().expect("msg");
    assert!(msg.contains(naming), "{msg}");
    assert!(reply.body["data"].is_null());
}

#[actix_web::test]
async fn index_daily_answers_tushares_columns_newest_first_with_the_native_values() {
    let (app, pro, _) = with_quotes().await;
    let reply = app
        .tushare(
            "index_daily",
            &pro.key,
            json!({"ts_code": "gpu_index,SSD_INDEX"}),
            "",
        )
        .await;
    assert_eq!((reply.status, reply.code()), (200, 0), "{}", reply.body);
    assert_eq!(reply.body["msg"], "");
    assert!(reply.body["request_id"]
        .as_str()
        .unwrap()
        .starts_with("req_"));
    let data = &reply.body["data"];
    assert_eq!(
        data["fields"],
        json!([
            "ts_code",
            "trade_date",
            "close",
            "pre_close",
            "change",
            "pct_chg"
        ])
    );
    assert_eq!(data["has_more"], false);
    let items = data["items"].as_array().unwrap();
    assert_eq!(items.len(), 2 * DAYS.len());
    // Newest first, then by code; the codes as the service spells them.
    assert_eq!(items[0][0], "GPU_Index");
    assert_eq!(items[0][1], "20261112");
    assert_eq!(items[1][0], "SSD_Index");
    assert!(items[0][2].is_number(), "{}", items[0]);
    assert!(
        items.last().unwrap()[3].is_null(),
        "the first day has no pre_close"
    );

    // The same numbers as the native answer's decimal strings.
    let native = app
        .query_with(
            json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"},
                   "fields": ["trade_date", "index_value", "pre_value", "change", "pct_change"]}),
            Some(&pro.key),
        )
        .await;
    let mut ours: Vec<Vec<String>> = native
        .items()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(text).collect())
        .collect();
    ours.reverse();
    let theirs: Vec<Vec<String>> = items
        .iter()
        .filter(|r| r[0] == "GPU_Index")
        .map(|r| r.as_array().unwrap()[1..].iter().map(text).collect())
        .collect();
    assert_eq!(theirs, ours);
}

/// A cell as text: a decimal (a number, or a native decimal string) normalised, a date
/// as it is, null empty.
fn text(v: &Value) -> String {
    let number = |s: &str| Decimal::from_str(s).map(|d| d.normalize().to_string());
    match v {
        Value::String(s) if s.len() == 8 && !s.contains('.') => s.clone(),
        Value::String(s) => number(s).unwrap_or_else(|_| s.clone()),
        Value::Null => String::new(),
        other => number(&other.to_string()).unwrap(),
    }
}

#[actix_web::test]
async fn fields_as_a_string_paging_and_the_other_datasets() {
    let (app, pro, _) = with_quotes().await;
    let reply = app
        .tushare(
            "index_weekly",
            &pro.key,
            json!({"ts_code": "GPU_Index", "limit": 1, "offset": null, "start_date": ""}),
            "ts_code,trade_date,close,open,high,low",
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.body["data"]["items"].as_array().unwrap().len(), 1);
    assert_eq!(reply.body["data"]["items"][0][1], "20261112");
    // One week of one index: no more after it.
    assert_eq!(reply.body["data"]["has_more"], false);

    let basic = app
        .tushare(
            "index_basic",
            &pro.key,
            json!({}),
            "ts_code,name,base_point",
        )
        .await;
    assert_eq!(basic.code(), 0, "{}", basic.body);
    assert_eq!(basic.body["data"]["items"][0][0], "Server_Index");

    let calendar = app
        .tushare(
            "trade_cal",
            &pro.key,
            json!({"exchange": "", "start_date": "20261106", "end_date": "20261109"}),
            "",
        )
        .await;
    assert_eq!(calendar.code(), 0, "{}", calendar.body);
    assert_eq!(
        calendar.body["data"]["items"],
        json!([
            ["IQ", "20261109", 1, "20261106"],
            ["IQ", "20261108", 0, "20261106"],
            ["IQ", "20261107", 0, "20261106"],
            ["IQ", "20261106", 1, "20261105"],
        ])
    );

    let weights = app
        .tushare(
            "index_weight",
            &pro.key,
            json!({"index_code": "server_index", "trade_date": "20261110"}),
            "",
        )
        .await;
    assert_eq!(weights.code(), 0, "{}", weights.body);
    assert_eq!(
        weights.body["data"]["items"],
        json!([["Server_Index", "unit", "20261110", 100.000000]])
    );
}

#[actix_web::test]
async fn every_refusal_is_http_200_with_the_services_code_and_what_was_wrong() {
    let (app, pro, free) = with_quotes().await;
    refused(
        &app.tushare("daily", &pro.key, json!({}), "").await,
        40001,
        "unknown api_name 'daily'",
    );
    refused(
        &app.tushare(
            "index_daily",
            &pro.key,
            json!({"ts_code": "GPU_Index"}),
            "open",
        )
        .await,
        40001,
        "one value a day",
    );
    refused(
        &app.tushare("index_daily", &pro.key, json!({"ts_cod": "GPU_Index"}), "")
            .await,
        40001,
        "unknown param 'ts_cod'",
    );
    refused(
        &app.tushare(
            "index_daily",
            &pro.key,
            json!({"start_date": "2026-13-01"}),
            "",
        )
        .await,
        40001,
        "start_date",
    );
    let nine = "A,B,C,D,E,F,G,H,I";
    refused(
        &app.tushare("index_daily", &pro.key, json!({"ts_code": nine}), "")
            .await,
        40001,
        "at most 8",
    );
    refused(
        &app.tushare("index_daily", "iq_not_a_real_key", json!({}), "")
            .await,
        40102,
        "",
    );
    // A free key: the member index is refused as on the native API.
    let member = app
        .tushare(
            "index_daily",
            &free.key,
            json!({"ts_code": "HARDWARE_INDEX"}),
            "",
        )
        .await;
    let native = app
        .query_with(
            json!({"api_name": "index_daily", "params": {"index_code": "Hardware_Index"}}),
            Some(&free.key),
        )
        .await;
    assert_eq!(member.code(), native.code(), "{}", member.body);
    assert_ne!(member.code(), 0);
    assert_eq!(member.status, 200);
    // A key in a header beside the token is ambiguous.
    let both = app
        .http
        .post(format!("{}/tushare", app.address))
        .header("X-API-Key", &pro.key)
        .json(&json!({"api_name": "index_basic", "token": pro.key}))
        .send()
        .await
        .unwrap();
    let both = TestApp::reply(both).await;
    refused(&both, 40102, "twice");
}
