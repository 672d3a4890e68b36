//! Validation of a query body: dates in both forms, default fields, and messages that
//! name the offending part; property tests in [`properties`].

use super::*;
use serde_json::json;

mod properties;

fn message(body: Value) -> String {
    let err = Query::parse(&body).unwrap_err();
    assert_eq!(err.code, crate::ErrorCode::InvalidRequest);
    err.message
}

#[test]
fn dates_in_both_forms_and_only_real_ones() {
    let d = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
    assert_eq!(parse_date("20240229"), Some(d));
    assert_eq!(parse_date("2024-02-29"), Some(d));
    for bad in [
        "20230229",
        "2024-2-29",
        "2024/02/29",
        "+2024022",
        "2024-02-2x",
        "",
        "٢٠٢٤٠٢٢٩",
    ] {
        assert_eq!(parse_date(bad), None, "{bad}");
    }
}

#[test]
fn defaults_apply_when_fields_are_omitted_or_empty() {
    let q = Query::parse(&json!({"api_name": "index_daily", "fields": []})).unwrap();
    let names: Vec<_> = q.fields.iter().map(|f| f.name).collect();
    assert_eq!(
        names,
        crate::catalogue::dataset("index_daily")
            .unwrap()
            .default_fields
    );
    assert_eq!(q.limit, DEFAULT_LIMIT);
    assert_eq!(q.offset, 0);
}

#[test]
fn messages_name_the_offending_part() {
    assert!(message(json!({"api_name": "index_daily", "params": {"foo": "1"}})).contains("'foo'"));
    assert!(message(json!({"api_name": "index_daily", "fields": ["nope"]})).contains("'nope'"));
    assert!(
        message(json!({"api_name": "index_daily", "params": {"index_code": ""}}))
            .contains("'index_code'")
    );
    assert!(
        message(json!({"api_name": "index_daily", "params": {"index_code": 5}}))
            .contains("'index_code'")
    );
    assert!(message(json!({"api_name": "index_daily", "limit": 0})).contains("'limit'"));
    assert!(message(json!({"api_name": "index_daily", "limit": 2.5})).contains("'limit'"));
    assert!(message(json!({"api_name": "index_daily", "offset": -1})).contains("'offset'"));
    assert!(message(json!({"api_name": "nope"})).contains("api_name"));
    assert!(message(json!({"api_name": "index_daily", "extra": 1})).contains("'extra'"));
    assert!(
        message(json!({"api_name": "index_daily", "fields": ["trade_date", "trade_date"]}))
            .contains("'trade_date'")
    );
    assert!(message(json!({"api_name": "index_daily", "params": {"trade_date": "20240101", "end_date": "20240102"}})).contains("'trade_date'"));
    assert!(message(json!({"api_name": "index_daily", "params": {"start_date": "20240102", "end_date": "2024-01-01"}})).contains("'start_date'"));
    assert!(
        message(json!({"api_name": "index_daily", "params": {"index_code": "a\u{0}b"}}))
            .contains("'index_code'")
    );
}
