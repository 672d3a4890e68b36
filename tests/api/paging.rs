//! Paging over the demo data set: small pages concatenate to the one big page.

use serde_json::json;

use crate::helpers::spawn_with_demo;

#[actix_web::test]
async fn small_pages_concatenate_to_the_single_big_page() {
    let app = spawn_with_demo().await;
    let body = json!({"api_name": "index_quote", "params": {"start_date": "20260801", "end_date": "20261031"}});
    let mut big = body.clone();
    big["limit"] = json!(5000);
    let whole = app.query(big).await;
    assert_eq!(whole.data()["has_more"], json!(false));
    let expected = whole.items().clone();
    // A visitor sees the quotes of the two `aggregate` indexes: 4 specifications each.
    assert!(
        expected.len() > 400,
        "demo data spans the range: {}",
        expected.len()
    );
    assert!(expected
        .iter()
        .all(|r| r[1] == "Server_Index" || r[1] == "Server_Rental_Index"));

    let walked = app.walk(body.clone(), 37).await;
    assert_eq!(walked, expected);

    // Rows are ordered by trade_date, index_code, specification.
    let keys: Vec<(String, String, String)> = expected
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().into(),
                r[1].as_str().unwrap().into(),
                r[2].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);

    // An offset past the end is an empty, successful page.
    let mut past = body;
    past["offset"] = json!(1_000_000);
    let reply = app.query(past).await;
    assert_eq!((reply.code(), reply.items().len()), (0, 0));
    assert_eq!(reply.data()["offset"], json!(1_000_000));
}

#[actix_web::test]
async fn demo_data_obeys_the_weight_rule_and_daily_rows_follow_the_quotes() {
    let app = spawn_with_demo().await;
    // For one date and one index the weights sum to exactly 1 (spec part 2, rule 1).
    let quotes = app
        .query(json!({"api_name": "index_quote", "params": {"index_code": "Server_Index", "trade_date": "20261105"}}))
        .await;
    let sum: rust_decimal::Decimal = quotes
        .column("weight")
        .iter()
        .map(|w| {
            w.as_str()
                .unwrap()
                .parse::<rust_decimal::Decimal>()
                .unwrap()
        })
        .sum();
    assert_eq!(sum, rust_decimal::Decimal::ONE);
    // weighted_price = round6(sum of weight x price), computed here independently.
    let expected: rust_decimal::Decimal = quotes
        .items()
        .iter()
        .map(|r| {
            r[3].as_str()
                .unwrap()
                .parse::<rust_decimal::Decimal>()
                .unwrap()
                * r[4]
                    .as_str()
                    .unwrap()
                    .parse::<rust_decimal::Decimal>()
                    .unwrap()
        })
        .sum::<rust_decimal::Decimal>()
        .round_dp_with_strategy(6, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    let daily = app
        .query(json!({"api_name": "index_daily", "params": {"index_code": "Server_Index", "trade_date": "20261105"}}))
        .await;
    let stored: rust_decimal::Decimal = daily.column("weighted_price")[0]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(stored, expected);
}

/// D10: demo data brings a free and a professional member, each with one working key.
#[actix_web::test]
async fn demo_data_brings_a_free_and_a_pro_member_with_a_key_each() {
    let app = spawn_with_demo().await;
    let rows = app
        .db
        .query(
            "SELECT u.username, u.tier, count(k.key_id) FROM users u \
             LEFT JOIN api_keys k USING (user_id) GROUP BY 1, 2 ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    let accounts: Vec<(String, String, i64)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        accounts,
        [
            ("demo_free".to_string(), "free".to_string(), 1),
            ("demo_pro".to_string(), "pro".to_string(), 1)
        ]
    );
    // No super administrator: the site still asks for set-up.
    assert_eq!(app.config().await.data()["initialized"], json!(false));
}
