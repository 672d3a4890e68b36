//! Imports in the running service: a second import while one runs is refused, another
//! instance sees the new data within a second, and the demo data comes in through the
//! same import path.

use std::time::Duration;

use serde_json::json;

use super::{daily, import_three_days, spawn, THREE_DAYS};
use crate::helpers::{count_rows, eventually};

#[actix_web::test]
async fn a_second_import_while_one_runs_is_refused() {
    let app = spawn().await;
    let admin = app.admin().await;
    // Hold the import lock as a running import would.
    app.db
        .execute("SELECT pg_advisory_lock($1)", &[&0x1A5E_0002_i64])
        .await
        .unwrap();
    app.import_file(&admin, "q.csv", THREE_DAYS.into())
        .await
        .assert_error(409, 40901);
    // Refused before it was read: no rows to count.
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(
        (&list.data()[0]["result"], &list.data()[0]["rows"]),
        (&json!("rejected"), &json!(0))
    );
    // A file that plainly is not a workbook is refused without waiting for the lock.
    app.import_file(&admin, "q.xlsx", b"trade_date,index_code".to_vec())
        .await
        .assert_error(400, 40001);
    app.db
        .execute("SELECT pg_advisory_unlock($1)", &[&0x1A5E_0002_i64])
        .await
        .unwrap();
    let reply = app.import_file(&admin, "q.csv", THREE_DAYS.into()).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

#[actix_web::test]
async fn another_instance_sees_the_new_data_within_a_second() {
    let app = spawn().await;
    let other = app.another_instance().await;
    let admin = app.admin().await;
    // Cache the empty answer on the other instance first.
    assert!(daily(&other, "Server_Index").await.is_empty());
    import_three_days(&app, &admin).await;
    let seen = || async { daily(&other, "Server_Index").await.len() == 3 };
    assert!(eventually(Duration::from_secs(1), seen).await);
}

#[actix_web::test]
async fn the_demo_data_and_its_correction_come_in_through_the_import_path() {
    let app = crate::helpers::spawn_with_demo().await;
    let admin = app.admin().await;
    let list = app.get_as(&admin, "/api/v1/admin/imports").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    // Newest first: the demo correction, then the demo quotes it corrects.
    let names: Vec<(Option<&str>, Option<&str>, Option<&str>)> = list
        .data()
        .as_array()
        .expect("imports")
        .iter()
        .map(|i| {
            (
                i["file_name"].as_str(),
                i["source"].as_str(),
                i["result"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            (Some("demo-correction.csv"), Some("demo"), Some("accepted")),
            (Some("demo-quotes.csv"), Some("demo"), Some("accepted")),
        ]
    );
    let demo = &list.data()[1];
    // The correction revised published values: the demo has revisions to show.
    let revisions = count_rows(&app.db, "index_revisions").await;
    assert!(revisions > 0);
    // Inside every plan's delay: a visitor's page of the index lists it.
    let page = app.page("/indexes/GPU_Index").await;
    assert_eq!(page.status, 200, "{}", page.html);
    page.assert_lacks("has been revised");
    page.assert_has("GPU_Index?range=3M&#38;as_of=");
    let quotes = count_rows(&app.db, "index_quotes").await;
    assert_eq!(demo["rows"].as_i64(), Some(quotes));
}
