//! The checks of a calendar change: lists, year ranges, holidays, weekend names, one
//! form at a time, and the messages that name what is wrong.

use super::*;
use crate::ErrorCode;
use serde_json::json;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

/// The body as the HTTP layer reads it.
fn body(value: serde_json::Value) -> CalendarChange {
    serde_json::from_value(value).expect("body shape")
}

fn plan(value: serde_json::Value) -> Result<CalendarPlan, ApiError> {
    body(value).plan()
}

/// Asserts a 40001 whose message contains every one of `words`.
fn refused(value: serde_json::Value, words: &[&str]) {
    let err = plan(value.clone()).expect_err(&value.to_string());
    assert_eq!(err.code, ErrorCode::InvalidRequest, "{value}: {err}");
    for word in words {
        assert!(err.message.contains(word), "{value}: {err} lacks {word}");
    }
}

#[test]
fn a_list_becomes_the_whole_calendar_sorted() {
    let got = plan(json!({"open_days": ["20261103", "20261102", "20240229"]})).unwrap();
    assert_eq!(
        got,
        CalendarPlan::Whole {
            open: vec![d(2024, 2, 29), d(2026, 11, 2), d(2026, 11, 3)]
        }
    );
}

#[test]
fn a_list_must_be_distinct_real_dates_in_the_allowed_years() {
    refused(json!({"open_days": []}), &["open_days", "at least one"]);
    refused(
        json!({"open_days": ["20261102", "20261102"]}),
        &["open_days[1]", "20261102", "more than once"],
    );
    for bad in [
        "2026-11-02",
        "2026112",
        "+2026112",
        "202611021",
        "",
        "abcdefgh",
    ] {
        refused(
            json!({"open_days": ["20261102", bad]}),
            &["open_days[1]", &format!("'{bad}'"), "YYYYMMDD"],
        );
    }
    refused(
        json!({"open_days": ["20250229"]}),
        &["open_days[0]", "20250229", "not a real date"],
    );
    refused(
        json!({"open_days": ["19891231"]}),
        &["19891231", "1990", "2100"],
    );
    refused(json!({"open_days": ["21010101"]}), &["21010101"]);
}

#[test]
fn a_list_has_a_size_limit() {
    let days: Vec<String> = d(1990, 1, 1)
        .iter_days()
        .take(MAX_OPEN_DAYS + 1)
        .map(|d| d.format("%Y%m%d").to_string())
        .collect();
    refused(json!({ "open_days": days }), &["open_days", "20000"]);
    let fits = &days[..MAX_OPEN_DAYS];
    assert!(plan(json!({ "open_days": fits })).is_ok());
}

#[test]
fn a_year_range_opens_weekdays_except_holidays() {
    let got = plan(json!({"from_year": 2026, "to_year": 2027,
                          "holidays": ["20261225", "20270101"]}))
    .unwrap();
    let CalendarPlan::Span { from, to, open } = got else {
        panic!("not a span");
    };
    assert_eq!((from, to), (d(2026, 1, 1), d(2027, 12, 31)));
    // 2026 and 2027 have 261 weekdays each; both holidays fall on a Friday.
    assert_eq!(open.len(), 261 + 261 - 2);
    assert!(open.iter().all(|d| d.weekday().num_days_from_monday() < 5));
    assert!(!open.contains(&d(2026, 12, 25)));
    assert!(open.contains(&d(2026, 12, 24)));
    assert_eq!(open.first(), Some(&d(2026, 1, 1)));
    assert_eq!(open.last(), Some(&d(2027, 12, 31)));
    assert!(open.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn the_weekend_rule_can_be_changed() {
    let got = plan(json!({"from_year": 2026, "to_year": 2026, "weekend": ["fri", "sat"]})).unwrap();
    let open = got.open();
    assert!(open.contains(&d(2026, 11, 22)), "a Sunday is open");
    assert!(!open.contains(&d(2026, 11, 20)), "a Friday is closed");
    let all_open = plan(json!({"from_year": 2024, "to_year": 2024, "weekend": []})).unwrap();
    assert_eq!(all_open.open().len(), 366);
    // A holiday on a weekend is allowed and changes nothing.
    let holiday =
        plan(json!({"from_year": 2026, "to_year": 2026, "holidays": ["20261121"]})).unwrap();
    assert_eq!(holiday.open().len(), 261);
}

#[test]
fn a_year_range_is_checked() {
    refused(json!({"from_year": 2026}), &["to_year", "required"]);
    refused(json!({"to_year": 2026}), &["from_year", "required"]);
    refused(
        json!({"holidays": ["20261225"]}),
        &["from_year", "required"],
    );
    refused(json!({"weekend": ["sat"]}), &["from_year", "required"]);
    refused(
        json!({"from_year": 1989, "to_year": 2026}),
        &["from_year", "1989", "1990", "2100"],
    );
    refused(
        json!({"from_year": 2026, "to_year": 2101}),
        &["to_year", "2101"],
    );
    refused(
        json!({"from_year": 2026, "to_year": 99999999999_i64}),
        &["to_year", "99999999999"],
    );
    refused(
        json!({"from_year": 2027, "to_year": 2026}),
        &["from_year 2027", "after", "to_year 2026"],
    );
    refused(
        json!({"from_year": 2000, "to_year": 2050}),
        &["51 years", "at most 50"],
    );
    assert!(plan(json!({"from_year": 2000, "to_year": 2049})).is_ok());
}

#[test]
fn holidays_must_be_distinct_dates_inside_the_span() {
    let cases: [(serde_json::Value, &[&str]); 5] = [
        (
            json!(["20261225", "20280101"]),
            &["holidays[1]", "20280101", "outside"],
        ),
        (json!(["20251231"]), &["holidays[0]", "20251231", "outside"]),
        (
            json!(["20261225", "20261225"]),
            &["holidays[1]", "20261225", "more than once"],
        ),
        (
            json!(["2026-12-25"]),
            &["holidays[0]", "2026-12-25", "YYYYMMDD"],
        ),
        (
            json!(["20260230"]),
            &["holidays[0]", "20260230", "not a real date"],
        ),
    ];
    for (holidays, words) in cases {
        refused(
            json!({"from_year": 2026, "to_year": 2027, "holidays": holidays}),
            words,
        );
    }
}

#[test]
fn weekend_names_are_lower_case_three_letter_days() {
    let range = |weekend: serde_json::Value| json!({"from_year": 2026, "to_year": 2026, "weekend": weekend});
    for bad in ["Sat", "saturday", "sa", ""] {
        refused(
            range(json!(["sun", bad])),
            &["weekend[1]", &format!("'{bad}'"), "mon, tue"],
        );
    }
    refused(
        range(json!(["sat", "sat"])),
        &["weekend[1]", "'sat'", "more than once"],
    );
    refused(
        range(json!(["mon", "tue", "wed", "thu", "fri", "sat", "sun"])),
        &["weekend", "every day"],
    );
}

#[test]
fn exactly_one_form() {
    refused(json!({}), &["open_days", "from_year", "to_year"]);
    refused(
        json!({"open_days": ["20261102"], "from_year": 2026, "to_year": 2026}),
        &["not both", "open_days", "from_year"],
    );
    refused(
        json!({"open_days": ["20261102"], "weekend": ["sat"]}),
        &["not both", "weekend"],
    );
    // null counts as absent.
    assert!(plan(json!({"open_days": null, "from_year": 2026, "to_year": 2026})).is_ok());
}

#[test]
fn unknown_fields_are_refused_by_the_body_type() {
    let err = serde_json::from_value::<CalendarChange>(json!({"open_day": []})).unwrap_err();
    assert!(err.to_string().contains("open_day"), "{err}");
    let err =
        serde_json::from_value::<CalendarChange>(json!({"open_days": [20261102]})).unwrap_err();
    assert!(err.to_string().contains("20261102"), "{err}");
}
