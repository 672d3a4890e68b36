//! Accepted imports: every quote stored as entered and every index value recalculated
//! from the first day changed, a day re-imported in the middle or with gaps around it,
//! and a workbook imported like a CSV file.

use rust_decimal::Decimal;
use serde_json::json;

use crate::helpers::select_column;

use super::{
    daily, dec, import_three_days, round6, spawn, spawn_with_three_days, stored_daily, OPEN_DAYS,
};

#[actix_web::test]
async fn an_accepted_file_is_stored_and_every_value_recalculated() {
    let app = spawn().await;
    let admin = app.admin().await;
    let reply = import_three_days(&app, &admin).await;
    assert_eq!(reply.data()["quotes"], 6);
    assert_eq!(
        reply.data()["recalculated_from"]["Server_Index"],
        "20261102"
    );

    // Independently: weighted price = round6(sum w*p); levels as ratios to the base
    // day (D26).
    let wp = [
        round6(dec("0.5") * dec("100") + dec("0.5") * dec("200")),
        round6(dec("0.5") * dec("110") + dec("0.5") * dec("200")),
        round6(dec("0.6") * dec("120.123457") + dec("0.4") * dec("190")),
    ];
    let v0 = dec("1000");
    let v1 = round6(v0 * wp[1] / wp[0]);
    let v2 = round6(v0 * wp[2] / wp[0]);
    let pct = |v: Decimal, pre: Decimal| round6((v - pre) / pre * dec("100"));
    assert_eq!(
        daily(&app, "Server_Index").await,
        vec![
            ("20261102".into(), v0, wp[0], None),
            ("20261103".into(), v1, wp[1], Some(pct(v1, v0))),
            ("20261104".into(), v2, wp[2], Some(pct(v2, v1))),
        ]
    );

    // Specifications are kept exactly as entered.
    let names: Vec<String> = select_column(
        &app.db,
        "SELECT DISTINCT specification FROM index_quotes ORDER BY 1",
    )
    .await;
    assert_eq!(names, vec!["8x H100", "8x H200"]);
}

#[actix_web::test]
async fn a_reimported_middle_day_recalculates_the_later_days() {
    let (app, admin) = spawn_with_three_days().await;
    let fix = "index_code,weight,price,specification,trade_date\n\
               Server_Index,1,165,8x H200,20261103\n";
    let reply = app.import_file(&admin, "fix.csv", fix.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(
        reply.data()["recalculated_from"]["Server_Index"],
        "20261103"
    );

    let wp0 = dec("150");
    let wp1 = dec("165");
    let wp2 = round6(dec("0.6") * dec("120.123457") + dec("0.4") * dec("190"));
    let v1 = round6(dec("1000") * wp1 / wp0);
    let v2 = round6(dec("1000") * wp2 / wp0);
    let values: Vec<(String, Decimal)> = daily(&app, "Server_Index")
        .await
        .into_iter()
        .map(|(d, v, _, _)| (d, v))
        .collect();
    assert_eq!(
        values,
        vec![
            ("20261102".into(), dec("1000")),
            ("20261103".into(), v1),
            ("20261104".into(), v2),
        ]
    );
}

#[actix_web::test]
async fn a_batch_with_gaps_keeps_the_quotes_of_the_days_between_and_after() {
    let app = spawn().await;
    let admin = app.admin().await;
    let five_days = "trade_date,index_code,specification,weight,price\n\
        20261102,Server_Index,8x H100,1,100\n\
        20261103,Server_Index,8x H100,1,110\n\
        20261104,Server_Index,8x H100,1,120\n\
        20261105,Server_Index,8x H100,1,130\n\
        20261106,Server_Index,8x H100,1,140\n";
    let first = app
        .import_file(&admin, "quotes.csv", five_days.into())
        .await;
    assert_eq!(first.code(), 0, "{}", first.body);
    // Two days replaced; the day between them and the day after stay as they were.
    let fix = "trade_date,index_code,specification,weight,price\n\
        20261103,Server_Index,8x H100,1,200\n\
        20261105,Server_Index,8x H100,1,300\n";
    let reply = app.import_file(&admin, "fix.csv", fix.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(
        reply.data()["recalculated_from"]["Server_Index"],
        "20261103"
    );

    let prices = ["100", "200", "120", "300", "140"].map(dec);
    let mut expected = vec![dec("1000")];
    for k in 1..prices.len() {
        expected.push(round6(expected[k - 1] * prices[k] / prices[k - 1]));
    }
    let got = stored_daily(&app, "Server_Index").await;
    let want: Vec<(String, Decimal, Decimal)> = OPEN_DAYS[..5]
        .iter()
        .zip(expected.iter().zip(prices))
        .map(|(d, (v, p))| (d.to_string(), *v, p))
        .collect();
    assert_eq!(got, want);
}

#[actix_web::test]
async fn a_workbook_imports_like_a_csv() {
    let app = spawn().await;
    let admin = app.admin().await;
    let rows = vec![iq_actors::quotes::QuoteRow {
        trade_date: chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap(),
        index_code: "GPU_Index".into(),
        specification: "Ä H100 SXM5 80GB ".into(),
        weight: dec("1"),
        price: dec("29700.123456"),
    }];
    let workbook = iq_actors::imports::write::to_xlsx(&rows).unwrap();
    let reply = app.import_file(&admin, "quotes.XLSX", workbook).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let stored = app
        .db
        .query_one("SELECT specification, price::text FROM index_quotes", &[])
        .await
        .unwrap();
    assert_eq!(stored.get::<_, String>(0), "Ä H100 SXM5 80GB ");
    assert_eq!(stored.get::<_, String>(1), "29700.123456");
}

#[actix_web::test]
async fn every_quote_bearing_index_is_a_ratio_to_its_own_base_day() {
    const CODES: [&str; 7] = [
        "Server_Index",
        "Server_Rental_Index",
        "GPU_Index",
        "DRAM_Index",
        "SSD_Index",
        "CPU_Index",
        "OI_Index",
    ];
    // What a member sees on this calendar with the clock on 20 November.
    let days = ["20261102", "20261103", "20261104"];
    let app = spawn().await;
    let admin = app.admin().await;
    // Two specifications an index at prices that wander; GPU_Index starts a day late.
    let mut file = String::from("trade_date,index_code,specification,weight,price\n");
    let price = |i: usize, d: usize, s: usize| {
        format!(
            "{}.{:06}",
            100 + (i * 7 + d * 13 + s * 5) % 17,
            (i + 1) * (d + 3) * 7919 % 1_000_000
        )
    };
    for (d, day) in days.iter().enumerate() {
        for (i, code) in CODES.iter().enumerate() {
            if *code == "GPU_Index" && d == 0 {
                continue;
            }
            file.push_str(&format!("{day},{code},a,0.37,{}\n", price(i, d, 0)));
            file.push_str(&format!("{day},{code},b,0.63,{}\n", price(i, d, 1)));
        }
    }
    let reply = app.import_file(&admin, "all.csv", file.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    for (i, code) in CODES.iter().enumerate() {
        let reply = app
            .query(
                json!({"api_name": "index_daily", "params": {"index_code": code},
                          "fields": ["trade_date", "index_value", "pre_value", "pct_change"]}),
            )
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        let first = if *code == "GPU_Index" { 1 } else { 0 };
        let wp = |d: usize| {
            round6(dec("0.37") * dec(&price(i, d, 0)) + dec("0.63") * dec(&price(i, d, 1)))
        };
        // Independently (D26): round6(1000 x wp(t) / wp(base day)), the change against
        // the previous day's level.
        let mut want = Vec::new();
        let mut pre: Option<Decimal> = None;
        for (d, day) in days.iter().enumerate().skip(first) {
            let value = round6(dec("1000") * wp(d) / wp(first));
            let pct = pre.map(|p| round6((value - p) / p * dec("100")));
            want.push((day.to_string(), value, pre, pct));
            pre = Some(value);
        }
        let num = |v: &serde_json::Value| v.as_str().map(dec);
        let got: Vec<(String, Decimal, Option<Decimal>, Option<Decimal>)> = reply
            .items()
            .iter()
            .map(|r| {
                (
                    r[0].as_str().unwrap().to_string(),
                    num(&r[1]).unwrap(),
                    num(&r[2]),
                    num(&r[3]),
                )
            })
            .collect();
        assert_eq!(got, want, "{code}");
    }
}
