//! Quote imports (D8): `POST /api/v1/admin/imports` end to end. Expected index values
//! are computed here, with the test's own decimal arithmetic, never the service's.

use reqwest::Method;
use rust_decimal::prelude::*;
use rust_decimal::RoundingStrategy;
use serde_json::{json, Value};

use std::time::Duration;

use crate::helpers::{eventually, spawn_with, Reply, Session, Spawn, TestApp};

/// The open days of [`CALENDAR`], as files write them.
const OPEN_DAYS: [&str; 10] = [
    "20261102", "20261103", "20261104", "20261105", "20261106", "20261109", "20261110", "20261111",
    "20261112", "20261113",
];

/// Weekdays 2026-11-02 .. 2026-11-13: the calendar, and nothing else.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-13'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

pub(crate) async fn spawn() -> TestApp {
    spawn_with(Spawn {
        setup_sql: CALENDAR,
        ..Spawn::default()
    })
    .await
}

/// A fresh service whose quotes are [`THREE_DAYS`], imported by its admin.
async fn spawn_with_three_days() -> (TestApp, Session) {
    let app = spawn().await;
    let admin = app.admin().await;
    let reply = upload(&app, &admin, "quotes.csv", THREE_DAYS.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    (app, admin)
}

/// `POST /api/v1/admin/imports` with `bytes` as the `file` field named `file_name`.
pub(crate) async fn upload(
    app: &TestApp,
    session: &Session,
    file_name: &str,
    bytes: Vec<u8>,
) -> Reply {
    let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_string());
    let form = reqwest::multipart::Form::new().part("file", part);
    let response = app
        .http
        .post(format!("{}/api/v1/admin/imports", app.address))
        .header("Cookie", &session.cookie)
        .header("X-CSRF-Token", &session.csrf)
        .multipart(form)
        .send()
        .await
        .expect("upload");
    TestApp::reply(response).await
}

fn round6(x: Decimal) -> Decimal {
    x.round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero)
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

/// `index_daily` of one index as the visitor sees it: (date, value, weighted price, pct).
async fn daily(app: &TestApp, code: &str) -> Vec<(String, Decimal, Decimal, Option<Decimal>)> {
    let reply = app
        .query(
            json!({"api_name": "index_daily", "params": {"index_code": code},
                      "fields": ["trade_date", "index_value", "weighted_price", "pct_change"]}),
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply
        .items()
        .iter()
        .map(|row| {
            let num = |v: &Value| v.as_str().map(dec);
            (
                row[0].as_str().unwrap().to_string(),
                num(&row[1]).unwrap(),
                num(&row[2]).unwrap(),
                num(&row[3]),
            )
        })
        .collect()
}

/// `index_daily` of one index as stored, every day (no delay, no tier): (date, value,
/// weighted price).
async fn stored_daily(app: &TestApp, code: &str) -> Vec<(String, Decimal, Decimal)> {
    app.db
        .query(
            "SELECT to_char(trade_date, 'YYYYMMDD'), index_value, weighted_price \
             FROM index_daily WHERE index_code = $1 ORDER BY trade_date",
            &[&code],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

const THREE_DAYS: &str = "trade_date,index_code,specification,weight,price\n\
    20261102,Server_Index,8x H100,0.5,100\n\
    20261102,Server_Index,8x H200,0.5,200\n\
    20261103,Server_Index,8x H100,0.5,110\n\
    20261103,Server_Index,8x H200,0.5,200\n\
    20261104,Server_Index,8x H100,0.6,120.123457\n\
    20261104,Server_Index,8x H200,0.4,190\n";

#[actix_web::test]
async fn an_accepted_file_is_stored_and_every_value_recalculated() {
    let app = spawn().await;
    let admin = app.admin().await;
    let reply = upload(&app, &admin, "quotes.csv", THREE_DAYS.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.data()["quotes"], 6);
    assert_eq!(
        reply.data()["recalculated_from"]["Server_Index"],
        "20261102"
    );

    // Independently: weighted price = round6(sum w*p); chain-linked values.
    let wp = [
        round6(dec("0.5") * dec("100") + dec("0.5") * dec("200")),
        round6(dec("0.5") * dec("110") + dec("0.5") * dec("200")),
        round6(dec("0.6") * dec("120.123457") + dec("0.4") * dec("190")),
    ];
    let v0 = dec("1000");
    let v1 = round6(v0 * wp[1] / wp[0]);
    let v2 = round6(v1 * wp[2] / wp[1]);
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
    let quotes = app
        .db
        .query(
            "SELECT DISTINCT specification FROM index_quotes ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    let names: Vec<String> = quotes.iter().map(|r| r.get(0)).collect();
    assert_eq!(names, vec!["8x H100", "8x H200"]);
}

#[actix_web::test]
async fn a_reimported_middle_day_recalculates_the_later_days() {
    let (app, admin) = spawn_with_three_days().await;
    let fix = "index_code,weight,price,specification,trade_date\n\
               Server_Index,1,165,8x H200,20261103\n";
    let reply = upload(&app, &admin, "fix.csv", fix.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(
        reply.data()["recalculated_from"]["Server_Index"],
        "20261103"
    );

    let wp0 = dec("150");
    let wp1 = dec("165");
    let wp2 = round6(dec("0.6") * dec("120.123457") + dec("0.4") * dec("190"));
    let v1 = round6(dec("1000") * wp1 / wp0);
    let v2 = round6(v1 * wp2 / wp1);
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
    let first = upload(&app, &admin, "quotes.csv", five_days.into()).await;
    assert_eq!(first.code(), 0, "{}", first.body);
    // Two days replaced; the day between them and the day after stay as they were.
    let fix = "trade_date,index_code,specification,weight,price\n\
        20261103,Server_Index,8x H100,1,200\n\
        20261105,Server_Index,8x H100,1,300\n";
    let reply = upload(&app, &admin, "fix.csv", fix.into()).await;
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

/// A file of `specs` specifications for each of four indexes on every open day, the
/// weights of each (date, index) summing to 1; the price of day `d` is `100 + d`.
fn large_file(specs: usize) -> String {
    let weight = Decimal::ONE / Decimal::from(specs);
    let mut file = String::from("trade_date,index_code,specification,weight,price\n");
    for (d, day) in OPEN_DAYS.iter().enumerate() {
        for code in ["Server_Index", "GPU_Index", "DRAM_Index", "SSD_Index"] {
            for s in 0..specs {
                file.push_str(&format!("{day},{code},spec {s},{weight},{}\n", 100 + d));
            }
        }
    }
    file
}

#[actix_web::test]
async fn a_large_file_refused_at_its_last_row_leaves_no_trace() {
    let (app, admin) = spawn_with_three_days().await;
    let before = stored_daily(&app, "Server_Index").await;

    // 20000 rows: more than two of the pieces an import stores while it still reads,
    // so the first pieces (which replace THREE_DAYS' days) are written before the last
    // row is seen.
    let rows = 20_000;
    let file = large_file(rows / 40);
    assert!(rows > 2 * iq_actors::imports::service::PIECE_ROWS);
    let bad = file
        .trim_end()
        .trim_end_matches(char::is_numeric)
        .to_owned()
        + "abc\n";
    let reply = upload(&app, &admin, "large.csv", bad.into()).await;
    assert_eq!((reply.status, reply.code()), (422, 40002), "{}", reply.body);
    let errors: Vec<(i64, &str)> = reply.body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| (e["row"].as_i64().unwrap(), e["column"].as_str().unwrap()))
        .collect();
    assert_eq!(errors, vec![(rows as i64 + 1, "price")]);
    assert_eq!(
        stored_daily(&app, "Server_Index").await,
        before,
        "nothing changed"
    );
    let quotes: i64 = app
        .db
        .query_one("SELECT count(*) FROM index_quotes", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(quotes, 6, "only THREE_DAYS' quotes");
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(list.data()[0]["rows"], rows);
    assert_eq!(list.data()[0]["result"], "rejected");

    // A file damaged past its first pieces (not UTF-8 on data row 15000) is a 40001
    // naming the row, with the same outcome: nothing stored, the rows read recorded.
    let damaged: Vec<u8> = file
        .lines()
        .enumerate()
        .flat_map(|(i, line)| {
            let mut bytes = line.as_bytes().to_vec();
            if i == 15_000 {
                bytes.extend_from_slice(b"\xFF");
            }
            bytes.push(b'\n');
            bytes
        })
        .collect();
    let reply = upload(&app, &admin, "damaged.csv", damaged).await;
    reply.assert_error(400, 40001);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("row 15001"),
        "{}",
        reply.body
    );
    assert_eq!(
        stored_daily(&app, "Server_Index").await,
        before,
        "nothing changed"
    );
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(list.data()[0]["file_name"], "damaged.csv");
    assert_eq!(list.data()[0]["rows"], 14_999);

    // The same file, right, goes in whole.
    let reply = upload(&app, &admin, "large.csv", file.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.data()["quotes"], rows);
    let mut value = dec("1000");
    let mut want = Vec::new();
    for (d, day) in OPEN_DAYS.iter().enumerate() {
        let price = Decimal::from(100 + d);
        if d > 0 {
            value = round6(value * price / Decimal::from(100 + d - 1));
        }
        want.push((day.to_string(), value, price));
    }
    assert_eq!(stored_daily(&app, "GPU_Index").await, want);
}

#[actix_web::test]
async fn a_rejected_file_lists_every_bad_row_and_leaves_no_trace() {
    let (app, admin) = spawn_with_three_days().await;
    let before = daily(&app, "Server_Index").await;

    let bad = "trade_date,index_code,specification,weight,price\n\
               20261103,Server_Index,8x H100,0.5,999\n\
               20261107,Server_Index,8x H100,1,100\n\
               20261105,Hardware_Index,x,1,100\n\
               20261105,SSD_Index,a,0.5,0\n\
               20261105,SSD_Index,b,0.3,10\n";
    let reply = upload(&app, &admin, "bad.csv", bad.into()).await;
    assert_eq!((reply.status, reply.code()), (422, 40002), "{}", reply.body);
    assert!(reply.data().is_null());
    let errors = reply.body["errors"].as_array().expect("errors");
    let at: Vec<(i64, &str)> = errors
        .iter()
        .map(|e| (e["row"].as_i64().unwrap(), e["column"].as_str().unwrap()))
        .collect();
    // Row 2: 20261103's weights now sum to 0.5; row 3: a Saturday; row 4: the
    // composite takes no quotes; row 5: price 0; rows 5 and 6: weights sum to 0.8 (row 5
    // is already bad, so its group is judged by its own error).
    for expected in [
        (2, "weight"),
        (3, "trade_date"),
        (4, "index_code"),
        (5, "price"),
    ] {
        assert!(
            at.contains(&expected),
            "{expected:?} missing from {}",
            reply.body
        );
    }
    assert!(errors
        .iter()
        .all(|e| !e["reason"].as_str().unwrap().is_empty()));

    assert_eq!(daily(&app, "Server_Index").await, before, "nothing changed");
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    let results: Vec<(&str, &str)> = list
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["file_name"].as_str().unwrap(),
                i["result"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![("bad.csv", "rejected"), ("quotes.csv", "accepted")]
    );
    assert_eq!(list.data()[0]["username"], "root");
    assert_eq!(list.data()[0]["rows"], 5);
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
    let reply = upload(&app, &admin, "quotes.XLSX", workbook).await;
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
async fn imports_need_an_admin_and_a_proper_upload() {
    let app = spawn().await;
    let admin = app.admin().await;
    let user = app.user(&admin, "ursula", "pro").await;
    upload(&app, &user, "q.csv", THREE_DAYS.into())
        .await
        .assert_error(403, 40301);
    let no_csrf = Session {
        csrf: "wrong".into(),
        ..admin.clone()
    };
    upload(&app, &no_csrf, "q.csv", THREE_DAYS.into())
        .await
        .assert_error(403, 40301);
    upload(&app, &admin, "q.txt", THREE_DAYS.into())
        .await
        .assert_error(400, 40001);
    upload(&app, &admin, "q.csv", vec![b'x'; 5 * 1024 * 1024])
        .await
        .assert_error(400, 40001);
    let json = app
        .send_as(&admin, Method::POST, "/api/v1/admin/imports", json!({}))
        .await;
    json.assert_error(400, 40001);
    upload(&app, &admin, "q.xlsx", b"not a zip".to_vec())
        .await
        .assert_error(400, 40001);
    let empty = upload(&app, &admin, "q.csv", Vec::new()).await;
    assert_eq!((empty.status, empty.code()), (422, 40002), "{}", empty.body);
}

#[actix_web::test]
async fn a_second_import_while_one_runs_is_refused() {
    let app = spawn().await;
    let admin = app.admin().await;
    // Hold the import lock as a running import would.
    app.db
        .execute("SELECT pg_advisory_lock($1)", &[&0x1A5E_0002_i64])
        .await
        .unwrap();
    upload(&app, &admin, "q.csv", THREE_DAYS.into())
        .await
        .assert_error(409, 40901);
    // Refused before it was read: no rows to count.
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(
        (&list.data()[0]["result"], &list.data()[0]["rows"]),
        (&json!("rejected"), &json!(0))
    );
    // A file that plainly is not a workbook is refused without waiting for the lock.
    upload(&app, &admin, "q.xlsx", b"trade_date,index_code".to_vec())
        .await
        .assert_error(400, 40001);
    app.db
        .execute("SELECT pg_advisory_unlock($1)", &[&0x1A5E_0002_i64])
        .await
        .unwrap();
    let reply = upload(&app, &admin, "q.csv", THREE_DAYS.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

#[actix_web::test]
async fn another_instance_sees_the_new_data_within_a_second() {
    let app = spawn().await;
    let other = app.another_instance().await;
    let admin = app.admin().await;
    // Cache the empty answer on the other instance first.
    assert!(daily(&other, "Server_Index").await.is_empty());
    let reply = upload(&app, &admin, "quotes.csv", THREE_DAYS.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let seen = || async { daily(&other, "Server_Index").await.len() == 3 };
    assert!(eventually(Duration::from_secs(1), seen).await);
}

#[actix_web::test]
async fn the_demo_data_comes_in_through_the_import_path() {
    let app = crate::helpers::spawn_with_demo().await;
    let admin = app.admin().await;
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    let demo = &list.data()[0];
    assert_eq!(
        (
            demo["file_name"].as_str(),
            demo["source"].as_str(),
            demo["result"].as_str()
        ),
        (Some("demo-quotes.csv"), Some("demo"), Some("accepted"))
    );
    let quotes: i64 = app
        .db
        .query_one("SELECT count(*) FROM index_quotes", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(demo["rows"].as_i64(), Some(quotes));
}
