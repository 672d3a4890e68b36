//! Property tests of the parts that read a client's bytes: dates and whole bodies.

use super::super::*;
use chrono::Datelike;
use proptest::prelude::*;
use serde_json::json;

proptest! {
    /// Any text: a date or `None`, never a panic; a date read back prints the same.
    #[test]
    fn dates_never_panic_and_round_trip(text in "\\PC{0,12}") {
        if let Some(date) = parse_date(&text) {
            let compact = date.format("%Y%m%d").to_string();
            let dashed = date.format("%Y-%m-%d").to_string();
            prop_assert!(text == compact || text == dashed, "{text} -> {date}");
        }
    }

    /// Every real date in both forms is read.
    #[test]
    fn real_dates_are_read(days in 0i64..3_000_000) {
        let date = NaiveDate::from_ymd_opt(1, 1, 1).unwrap() + chrono::Duration::days(days);
        if date.year() <= 9999 {
            prop_assert_eq!(parse_date(&date.format("%Y%m%d").to_string()), Some(date));
            prop_assert_eq!(parse_date(&date.format("%Y-%m-%d").to_string()), Some(date));
        }
    }

    /// Arbitrary bodies built from the catalogue's own names and hostile values:
    /// a query or a 40001, never a panic.
    #[test]
    fn bodies_parse_or_are_refused(
        api_name in prop_oneof![Just("index_daily"), Just("index_quote"), Just("trade_calendar"), Just("nope")],
        param in prop_oneof![Just("index_code"), Just("trade_date"), Just("start_date"), Just("end_date"), Just("x")],
        value in prop_oneof![
            "\\PC{0,12}".prop_map(Value::String),
            any::<i64>().prop_map(Value::from),
            Just(Value::Null),
            Just(json!([])),
        ],
        fields in proptest::collection::vec("[a-z_]{0,12}", 0..4),
        limit in prop_oneof![any::<i64>().prop_map(Value::from), Just(json!("10")), Just(json!(1.5))],
    ) {
        let body = json!({
            "api_name": api_name,
            "params": {param: value},
            "fields": fields,
            "limit": limit,
        });
        if let Err(error) = Query::parse(&body) {
            prop_assert_eq!(error.code, crate::ErrorCode::InvalidRequest);
        }
    }
}
