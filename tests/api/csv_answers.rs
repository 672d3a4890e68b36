//! `Accept: text/csv` on `POST /api/v1/query` (D18): the same page as the JSON answer,
//! cell for cell, with the page's place in headers; refusals stay JSON.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    header_text, rename_fixture_specification, spawn_with_fixture, TestApp, DATASETS_BUT_REVISIONS,
};

async fn csv(app: &TestApp, body: &Value, key: Option<&str>) -> reqwest::Response {
    let mut request = app
        .request(Method::POST, "/api/v1/query")
        .header("Accept", "text/csv")
        .json(body);
    if let Some(key) = key {
        request = request.header("X-API-Key", key);
    }
    request.send().await.unwrap()
}

/// Splits RFC 4180 text into rows of cells (enough for these answers: quoted cells may
/// hold commas and doubled quotes).
fn parse(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.split_terminator("\r\n") {
        let mut cells = Vec::new();
        let mut cell = String::new();
        let (mut quoted, mut chars) = (false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cell.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => cells.push(std::mem::take(&mut cell)),
                (c, _) => cell.push(c),
            }
        }
        cells.push(cell);
        rows.push(cells);
    }
    rows
}

fn as_cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[actix_web::test]
async fn a_csv_answer_is_the_json_answer_cell_for_cell() {
    let app = spawn_with_fixture().await;
    let key = app.member_key("kim", "pro").await;
    // Every dataset, with nulls (the first day's change), booleans and integers.
    for api_name in DATASETS_BUT_REVISIONS {
        let body = json!({"api_name": api_name, "limit": 4, "offset": 1});
        let json = app.query_with(body.clone(), Some(&key.key)).await;
        let answer = csv(&app, &body, Some(&key.key)).await;
        assert_eq!(answer.status(), 200, "{api_name}");
        let headers = answer.headers().clone();
        assert_eq!(headers["content-type"], "text/csv; charset=utf-8");
        assert!(headers.contains_key("x-request-id"));
        assert!(headers.contains_key("x-ratelimit-remaining"), "{api_name}");
        let data = json.data();
        assert_eq!(headers["x-limit"], data["limit"].to_string().as_str());
        assert_eq!(headers["x-offset"], "1");
        assert_eq!(headers["x-returned"], data["returned"].to_string().as_str());
        assert_eq!(headers["x-has-more"], data["has_more"].to_string().as_str());
        let rows = parse(&answer.text().await.unwrap());
        assert_eq!(rows[0], json.fields(), "{api_name}");
        let items: Vec<Vec<String>> = json
            .items()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(as_cell).collect())
            .collect();
        // Rows to compare: an empty page would make the comparison pass vacuously.
        assert!(!items.is_empty(), "{api_name}: no rows past the first");
        assert_eq!(rows[1..], items[..], "{api_name}");
    }
}

#[actix_web::test]
async fn specification_names_are_quoted_and_refusals_stay_json() {
    let app = spawn_with_fixture().await;
    rename_fixture_specification(&app.db, r#"8x H100, "SXM""#).await;
    let body = json!({"api_name": "index_quote", "params": {"trade_date": "20261110"}});
    let text = csv(&app, &body, None).await.text().await.unwrap();
    assert!(text.contains("\"8x H100, \"\"SXM\"\"\""), "{text}");
    let refused = csv(&app, &json!({"api_name": "nope"}), None).await;
    assert_eq!(refused.status(), 400);
    assert!(header_text(refused.headers(), "content-type").starts_with("application/json"));
    let envelope: Value = refused.json().await.unwrap();
    assert_eq!(envelope["code"], 40001);
}
