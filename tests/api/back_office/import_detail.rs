//! Imports in the back office: the list a page at a time, and one import with what it
//! changed per index (the composite included) or, when refused, its problems.

use super::*;
use crate::helpers::quotes::{BASES, HEADER};
use crate::helpers::{spawn_with_sql, Reply};

/// Weekdays 2026-11-02 .. 2026-11-13: the calendar, and nothing else.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-13'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

/// Three days (2-4 November) of one specification for each base index, prices moving.
fn first_file() -> String {
    let mut file = HEADER.to_string();
    for (i, code) in BASES.iter().enumerate() {
        for (day, step) in [("20261102", 0), ("20261103", 10), ("20261104", 20)] {
            let price = 100 + 7 * i + step;
            file += &format!("{day},{code},spec {i},1,{price}\n");
        }
    }
    file
}

/// One import's change counts for one index, as answers list them.
fn counts(code: &str, quote_days: (u64, u64), daily_rows: (u64, u64)) -> Value {
    json!({"index_code": code,
           "quote_days_added": quote_days.0, "quote_days_replaced": quote_days.1,
           "daily_rows_added": daily_rows.0, "daily_rows_revised": daily_rows.1})
}

async fn stored_rows(app: &TestApp, code: &str) -> u64 {
    let row = app
        .db
        .query_one(
            "SELECT count(*) FROM index_daily WHERE index_code = $1",
            &[&code],
        )
        .await
        .unwrap();
    row.get::<_, i64>(0) as u64
}

fn id_of(reply: &Reply) -> String {
    reply.data()["import_id"]
        .as_str()
        .unwrap_or_else(|| panic!("import_id: {}", reply.body))
        .to_string()
}

#[actix_web::test]
async fn an_import_shows_what_it_changed_per_index() {
    let app = spawn_with_sql(CALENDAR).await;
    let admin = app.admin().await;

    // A first import adds everything: three days of quotes and rows per base index, and
    // the composite's rows.
    let first = app
        .import_file(&admin, "first.csv", first_file().into())
        .await;
    assert_eq!(first.code(), 0, "{}", first.body);
    let composite_rows = stored_rows(&app, "Hardware_Index").await;
    assert_eq!(composite_rows, 3);
    let mut expected: Vec<Value> = BASES
        .iter()
        .map(|code| counts(code, (3, 0), (3, 0)))
        .collect();
    expected.push(counts("Hardware_Index", (0, 0), (composite_rows, 0)));
    expected.sort_by_key(|c| c["index_code"].as_str().unwrap().to_string());
    assert_eq!(first.data()["changes"], json!(expected), "{}", first.body);

    let detail = app.import_detail(&admin, &id_of(&first)).await;
    assert_eq!(detail.code(), 0, "{}", detail.body);
    let data = detail.data();
    assert_eq!(data["id"], id_of(&first).as_str());
    assert_eq!(data["result"], "accepted");
    assert_eq!(data["file_name"], "first.csv");
    assert_eq!(data["username"], "root");
    assert_eq!(data["source"], "http");
    assert_eq!(data["rows"], 18);
    assert_eq!(data["errors"], 0);
    assert_eq!(data["changes"], json!(expected));
    assert_eq!(data["row_errors"], json!([]));

    // A correction: 3 November of the server index (a replaced day whose rows and the
    // later ones change), a new day after it (added), and 4 November of the GPU index
    // sent again unchanged (a replaced day whose row stays as it was).
    let fix = format!(
        "{HEADER}20261103,Server_Index,spec 0,1,115\n\
         20261105,Server_Index,spec 0,1,125\n\
         20261104,GPU_Index,spec 1,1,127\n"
    );
    let second = app.import_file(&admin, "fix.csv", fix.into()).await;
    assert_eq!(second.code(), 0, "{}", second.body);
    let expected = json!([
        counts("GPU_Index", (0, 1), (0, 0)),
        // Recalculated from 3 November: both of its days there take new values.
        counts("Hardware_Index", (0, 0), (0, 2)),
        counts("Server_Index", (1, 1), (1, 2)),
    ]);
    assert_eq!(second.data()["changes"], expected, "{}", second.body);
    assert_eq!(stored_rows(&app, "Server_Index").await, 4);
    assert_eq!(stored_rows(&app, "Hardware_Index").await, 3);
    let detail = app.import_detail(&admin, &id_of(&second)).await;
    assert_eq!(detail.data()["changes"], expected, "{}", detail.body);
    assert_eq!(detail.data()["rows"], 3);

    // The first import's record is unchanged by the second.
    let again = app.import_detail(&admin, &id_of(&first)).await;
    assert_eq!(again.data()["changes"].as_array().unwrap().len(), 7);
}

#[actix_web::test]
async fn a_refused_import_keeps_its_problems() {
    let app = spawn_with_sql(CALENDAR).await;
    let admin = app.admin().await;
    let bad = format!(
        "{HEADER}20261102,Server_Index,a,abc,100\n\
         20261103,Nope_Index,b,1,100\n\
         20261104,Server_Index,c,1,100\n"
    );
    let refused = app.import_file(&admin, "bad.csv", bad.into()).await;
    refused.assert_error(422, 40002);
    let answered = refused.body["errors"].clone();
    assert!(answered.as_array().unwrap().len() >= 2, "{}", refused.body);

    let list = app.imports(&admin, "").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    let record = &list.data()[0];
    assert_eq!(record["result"], "rejected");
    assert_eq!(record["errors"], refused.body["errors_total"]);
    let id = record["id"].as_str().unwrap().to_string();

    let detail = app.import_detail(&admin, &id).await;
    assert_eq!(detail.code(), 0, "{}", detail.body);
    let data = detail.data();
    assert_eq!(data["result"], "rejected");
    assert_eq!(data["changes"], json!([]));
    // The problems as the answer listed them: row, column and reason.
    assert_eq!(data["row_errors"], answered);
    let listed = data["row_errors"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|e| e["row"] == 2 && e["column"] == "weight"),
        "{data}"
    );
    assert!(
        listed
            .iter()
            .any(|e| e["row"] == 3 && e["column"] == "index_code" && e["reason"].is_string()),
        "{data}"
    );
    // Nothing of it was stored.
    assert_eq!(stored_rows(&app, "Server_Index").await, 0);

    // A file refused before its rows were read has no row problems.
    let wrong_type = app.import_file(&admin, "quotes.txt", b"x".to_vec()).await;
    wrong_type.assert_error(400, 40001);
    let id = app.imports(&admin, "limit=1").await.data()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let detail = app.import_detail(&admin, &id).await;
    assert_eq!(detail.data()["file_name"], "quotes.txt");
    assert_eq!(detail.data()["row_errors"], json!([]));
    assert_eq!(detail.data()["changes"], json!([]));

    for unknown in ["999999", "first", "-1"] {
        app.import_detail(&admin, unknown)
            .await
            .assert_error(404, 40401);
    }
}

#[actix_web::test]
async fn imports_are_listed_a_page_at_a_time_for_administrators() {
    let app = spawn_with_sql(CALENDAR).await;
    let admin = app.admin().await;
    let ada = app.user_with_role(&admin, "ada", "admin").await;
    let bob = app.user(&admin, "bob", "free").await;
    for n in 0..3 {
        let file = format!("{HEADER}2026110{},Server_Index,s,1,100\n", n + 2);
        let reply = app
            .import_file(&ada, &format!("day{n}.csv"), file.into())
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
    let file_names = |reply: &Reply| -> Vec<String> {
        reply
            .data()
            .as_array()
            .unwrap_or_else(|| panic!("a list: {}", reply.body))
            .iter()
            .map(|i| i["file_name"].as_str().unwrap().to_string())
            .collect()
    };

    // An administrator lists and reads them; newest first.
    let all = app.imports(&ada, "").await;
    assert_eq!(file_names(&all), ["day2.csv", "day1.csv", "day0.csv"]);
    assert_eq!(all.data()[0]["username"], "ada");
    assert_eq!(
        file_names(&app.imports(&ada, "limit=2").await),
        ["day2.csv", "day1.csv"]
    );
    assert_eq!(
        file_names(&app.imports(&ada, "limit=2&offset=2").await),
        ["day0.csv"]
    );
    assert!(file_names(&app.imports(&ada, "offset=3").await).is_empty());
    assert_eq!(file_names(&app.imports(&ada, "limit=500").await).len(), 3);
    for bad in ["limit=0", "limit=501", "offset=-1", "offset=x", "q=day"] {
        app.imports(&ada, bad).await.assert_error(400, 40001);
    }
    let id = all.data()[0]["id"].as_str().unwrap().to_string();
    let detail = app.import_detail(&ada, &id).await;
    assert_eq!(detail.code(), 0, "{}", detail.body);
    assert_eq!(
        detail.data()["changes"][1],
        counts("Server_Index", (1, 0), (1, 0))
    );

    // A plain user may not; nor may anyone without a session.
    app.imports(&bob, "").await.assert_error(403, 40301);
    app.import_detail(&bob, &id).await.assert_error(403, 40301);
    app.get("/api/v1/admin/imports")
        .await
        .assert_error(401, 40101);
    app.get(&format!("/api/v1/admin/imports/{id}"))
        .await
        .assert_error(401, 40101);
}
