//! Each dataset's defaults, explicit field order, ordering, wire formats and empty results.

use serde_json::json;

use crate::helpers::{
    spawn_app, spawn_with_fixture, spawn_with_fixture_then, DATASETS_BUT_REVISIONS,
};

#[actix_web::test]
async fn index_basic_lists_the_visible_indexes_in_display_order_with_all_fields() {
    let app = spawn_with_fixture().await;
    let reply = app.query(json!({"api_name": "index_basic"})).await;
    assert_eq!(reply.status, 200);
    assert_eq!((reply.code(), reply.message()), (0, "ok"));
    assert_eq!(
        reply.fields(),
        [
            "index_code",
            "index_name",
            "sort_no",
            "visibility",
            "base_date",
            "base_value",
            "unit",
            "has_quotes",
            "description"
        ]
    );
    assert_eq!(
        reply.column("index_code"),
        [
            "Server_Index",
            "Server_Rental_Index",
            "GPU_Index",
            "DRAM_Index",
            "SSD_Index",
            "CPU_Index",
            "OI_Index"
        ]
    );
    let first = &reply.items()[0];
    assert_eq!(first[2], json!(10), "sort_no is an integer");
    assert_eq!(first[3], json!("aggregate"));
    assert_eq!(
        first[4],
        json!("20261109"),
        "base_date is the first date with a value"
    );
    assert_eq!(first[5], json!("1000.000000"));
    assert_eq!(first[7], json!(true));
    // An index with no value yet has no base date.
    assert_eq!(reply.items()[1][4], json!(null));
}

#[actix_web::test]
async fn display_order_follows_sort_no_then_code_point() {
    let app = spawn_with_fixture_then(
        "UPDATE indexes SET sort_no = 1 WHERE index_code IN ('SSD_Index', 'Server_Index')",
    )
    .await;
    let reply = app
        .query(json!({"api_name": "index_basic", "fields": ["index_code"]}))
        .await;
    let codes = reply.column("index_code");
    // Same sort_no: by code point, so SSD_Index precedes Server_Index.
    assert_eq!(codes[..2], [json!("SSD_Index"), json!("Server_Index")]);
}

#[actix_web::test]
async fn index_daily_defaults_scales_nulls_and_ordering() {
    let app = spawn_with_fixture().await;
    let reply = app
        .query(json!({"api_name": "index_daily", "params": {"end_date": "2026-11-10"}}))
        .await;
    assert_eq!(
        reply.fields(),
        [
            "trade_date",
            "index_code",
            "index_value",
            "weighted_price",
            "change",
            "pct_change"
        ]
    );
    let rows: Vec<(String, String)> = reply
        .items()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("20261109", "GPU_Index"),
        ("20261109", "SSD_Index"),
        ("20261109", "Server_Index"),
        ("20261110", "GPU_Index"),
        ("20261110", "SSD_Index"),
        ("20261110", "Server_Index"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(d, c)| (d.to_string(), c.to_string()))
        .collect();
    assert_eq!(rows, expected, "trade_date, then index_code by code point");
    // First day: change and pct_change are null.
    assert_eq!(
        reply.items()[2],
        json!([
            "20261109",
            "Server_Index",
            "1000.000000",
            "250000.500000",
            null,
            null
        ])
    );
    // Six fractional digits, rounded half away from zero from the stored value.
    assert_eq!(
        reply.items()[5],
        json!([
            "20261110",
            "Server_Index",
            "1010.123456",
            "252531.360000",
            "10.123456",
            "1.012346"
        ])
    );
    // index_only index: weighted_price null for a website identity.
    assert_eq!(reply.items()[3][3], json!(null));
}

#[actix_web::test]
async fn explicit_fields_come_back_in_the_requested_order() {
    let app = spawn_with_fixture().await;
    let reply = app
        .query(json!({
            "api_name": "index_daily",
            "params": {"index_code": "Server_Index", "trade_date": "20261110"},
            "fields": ["pct_change", "pre_value", "trade_date"]
        }))
        .await;
    assert_eq!(reply.fields(), ["pct_change", "pre_value", "trade_date"]);
    assert_eq!(
        reply.items(),
        &vec![json!(["1.012346", "1000.000000", "20261110"])]
    );
}

#[actix_web::test]
async fn index_latest_gives_one_row_per_visible_index_at_the_cutoff() {
    let app = spawn_with_fixture().await;
    let reply = app.query(json!({"api_name": "index_latest"})).await;
    assert_eq!(reply.fields()[..2], ["trade_date", "index_code"]);
    // Display order (sort_no), latest row on or before the free cutoff (10 Nov): the
    // 11 Nov Server_Index row is beyond it, and Hardware_Index is not visible.
    assert_eq!(
        reply
            .items()
            .iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect::<Vec<_>>(),
        [
            (json!("20261110"), json!("Server_Index")),
            (json!("20261110"), json!("GPU_Index")),
            (json!("20261110"), json!("SSD_Index")),
        ]
    );
}

#[actix_web::test]
async fn index_quote_formats_weights_with_8_and_prices_with_6_digits_in_code_point_order() {
    let app = spawn_with_fixture().await;
    let reply = app.query(json!({"api_name": "index_quote"})).await;
    assert_eq!(
        reply.fields(),
        [
            "trade_date",
            "index_code",
            "specification",
            "weight",
            "price"
        ]
    );
    assert_eq!(
        reply.items(),
        &vec![
            json!([
                "20261110",
                "Server_Index",
                "B 8x H200 SXM 141GB",
                "0.40000000",
                "255328.200000"
            ]),
            json!([
                "20261110",
                "Server_Index",
                "b 8x H100 SXM 80GB",
                "0.50000000",
                "250000.100000"
            ]),
            json!([
                "20261110",
                "Server_Index",
                "Ä 8x B200 SXM 180GB",
                "0.10000000",
                "465000.000000"
            ]),
        ]
    );
    let exact = app
        .query(
            json!({"api_name": "index_quote", "params": {"specification": "Ä 8x B200 SXM 180GB"}}),
        )
        .await;
    assert_eq!(exact.items().len(), 1);
    let fuzzy = app
        .query(json!({"api_name": "index_quote", "params": {"specification": "8x B200"}}))
        .await;
    assert_eq!(fuzzy.items().len(), 0, "exact match only");
}

#[actix_web::test]
async fn trade_calendar_lists_open_days_with_the_previous_open_day() {
    let app = spawn_with_fixture().await;
    let reply = app
        .query(json!({"api_name": "trade_calendar", "params": {"start_date": "20261113", "end_date": "20261118"}}))
        .await;
    assert_eq!(reply.fields(), ["trade_date", "pretrade_date"]);
    assert_eq!(
        reply.items(),
        &vec![
            json!(["20261113", "20261112"]),
            json!(["20261117", "20261113"]),
            json!(["20261118", "20261117"])
        ]
    );
    let first = app
        .query(json!({"api_name": "trade_calendar", "limit": 1}))
        .await;
    assert_eq!(first.items(), &vec![json!(["20261102", null])]);
    // The calendar is not delayed: days after the cutoff and in the future are listed.
    let all = app.query(json!({"api_name": "trade_calendar"})).await;
    assert_eq!(all.items().last().unwrap()[0], json!("20261130"));
}

#[actix_web::test]
async fn a_query_that_matches_nothing_succeeds_with_no_items() {
    let app = spawn_app().await;
    // The datasets that data fills are empty on an empty database, but index_basic: its
    // rows, the indexes, come with the schema.
    for api_name in DATASETS_BUT_REVISIONS
        .into_iter()
        .filter(|d| *d != "index_basic")
    {
        let reply = app.query(json!({"api_name": api_name})).await;
        assert_eq!((reply.status, reply.code()), (200, 0), "{api_name}");
        assert_eq!(reply.items().len(), 0, "{api_name}");
        assert_eq!(reply.data()["returned"], json!(0));
        assert_eq!(reply.data()["has_more"], json!(false));
    }
    let unknown = app
        .query(json!({"api_name": "index_basic", "params": {"index_code": "server_index"}}))
        .await;
    assert_eq!(
        (unknown.code(), unknown.items().len()),
        (0, 0),
        "codes are case-sensitive"
    );
}
