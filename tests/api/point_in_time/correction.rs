//! A correction of a past day, read back: `as_of` before it answers the original
//! quotes, index values, latest rows and composite, `as_of` after it the new ones;
//! `updated_since` answers exactly the revised rows (quotes by whole day); unchanged
//! rows keep their `published_at`; history holds only what changed; the back office
//! lists what each import changed.

use std::collections::{BTreeMap, BTreeSet};

use chrono::Duration as Days;
use serde_json::{json, Value};

use super::*;
use crate::helpers::count_rows;
use crate::helpers::quotes::import;

#[actix_web::test]
async fn as_of_before_a_correction_answers_the_original_values_and_after_it_the_new_ones() {
    let (app, admin, key) = spawn().await;
    let first = first_file();
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first).await);
    let daily_1 = daily(&app, &key, json!({})).await;
    let quotes_1 = quotes(&app, &key, json!({})).await;
    assert_eq!(daily_1.len(), 7 * DAYS.len(), "six bases and the composite");
    assert!(daily_1.iter().all(|r| r[6] == p1.as_str()));

    // A correction of Server_Index's 8x H100 on 20261103 (8x H200 sent again the same),
    // and GPU_Index's 20261104 sent again unchanged.
    let mut correction: Vec<Quote> = first
        .iter()
        .filter(|q| {
            (q.0 == "20261103" && q.1 == "Server_Index")
                || (q.0 == "20261104" && q.1 == "GPU_Index")
        })
        .cloned()
        .collect();
    for q in &mut correction {
        if q.2 == "8x H100" {
            q.4 = "1234.5".into();
        }
    }
    let second = import(&app, &admin, "quotes.csv", &correction).await;
    let p2 = published_at(&second);
    assert!(instant(&p2) > instant(&p1));
    let daily_2 = daily(&app, &key, json!({})).await;
    let quotes_2 = quotes(&app, &key, json!({})).await;

    // The correction moved Server_Index on 20261103 and the next day's change, nothing
    // later (D26: levels are ratios to the base day, with no drift to carry); the
    // composite, chained on the daily changes, from 20261103 on; nothing else.
    let revised: BTreeSet<(String, String)> = daily_1
        .iter()
        .zip(&daily_2)
        .filter(|(a, b)| values(a) != values(b))
        .map(|(a, _)| key_of(a))
        .collect();
    let server: BTreeSet<&str> = revised
        .iter()
        .filter(|(_, code)| code == "Server_Index")
        .map(|(date, _)| date.as_str())
        .collect();
    assert_eq!(server, BTreeSet::from(["20261103", "20261104"]));
    let next_day = |rows: &[Value]| {
        rows.iter()
            .find(|r| r[0] == "20261104" && r[1] == "Server_Index")
            .cloned()
            .unwrap()
    };
    // The next day keeps its level; only what it is compared with moved.
    assert_eq!(next_day(&daily_1)[2], next_day(&daily_2)[2]);
    assert_ne!(next_day(&daily_1)[3], next_day(&daily_2)[3]);
    let composite: BTreeSet<&str> = revised
        .iter()
        .filter(|(_, code)| code == "Hardware_Index")
        .map(|(date, _)| date.as_str())
        .collect();
    assert_eq!(composite, DAYS[1..].iter().copied().collect());
    assert!(revised
        .iter()
        .all(|(_, code)| code == "Server_Index" || code == "Hardware_Index"));
    let revised_of = |code: &str| revised.iter().filter(|(_, c)| c == code).count();
    // Revised rows carry the new publication; every other row keeps its own.
    for row in &daily_2 {
        let want = if revised.contains(&key_of(row)) {
            &p2
        } else {
            &p1
        };
        assert_eq!(row[6], want.as_str(), "{row}");
    }

    // as_of the first publication: the original quotes, index values and composite.
    assert_eq!(daily(&app, &key, json!({"as_of": p1})).await, daily_1);
    assert_eq!(quotes(&app, &key, json!({"as_of": p1})).await, quotes_1);
    let latest_1 = rows(
        &app,
        &key,
        "index_latest",
        &DAILY_FIELDS,
        json!({"as_of": p1}),
    )
    .await;
    let hardware_1 = latest_1.iter().find(|r| r[1] == "Hardware_Index").unwrap();
    assert_eq!(
        hardware_1,
        daily_1.iter().rfind(|r| r[1] == "Hardware_Index").unwrap()
    );
    // A microsecond before it: nothing yet.
    let before = rfc3339(instant(&p1) - Days::microseconds(1));
    assert!(daily(&app, &key, json!({"as_of": before})).await.is_empty());
    assert!(quotes(&app, &key, json!({"as_of": before}))
        .await
        .is_empty());
    // as_of the second publication, or a date in the future: today's data.
    assert_eq!(daily(&app, &key, json!({"as_of": p2})).await, daily_2);
    assert_eq!(
        daily(&app, &key, json!({"as_of": "2099-12-31"})).await,
        daily_2
    );
    assert_eq!(
        quotes(&app, &key, json!({"as_of": "20991231"})).await,
        quotes_2
    );

    // updated_since the first publication: exactly the revised rows...
    let since = daily(&app, &key, json!({"updated_since": p1})).await;
    let since_keys: BTreeSet<(String, String)> = since.iter().map(key_of).collect();
    assert_eq!(since_keys, revised);
    // ...and the corrected quote's whole day, the unchanged 8x H200 with it (keeping
    // its publication), not the GPU day sent again unchanged.
    let since_quotes = quotes(&app, &key, json!({"updated_since": p1})).await;
    let cells: Vec<(String, String, String)> = since_quotes
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().into(),
                r[2].as_str().unwrap().into(),
                r[5].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("20261103".into(), "8x H100".into(), p2.clone()),
            ("20261103".into(), "8x H200".into(), p1.clone()),
        ]
    );
    // Nothing after the second; the window (p1, p1] is empty.
    assert!(daily(&app, &key, json!({"updated_since": p2}))
        .await
        .is_empty());
    assert!(daily(&app, &key, json!({"updated_since": p1, "as_of": p1}))
        .await
        .is_empty());
    assert_eq!(
        quotes(&app, &key, json!({"updated_since": p1, "as_of": p2})).await,
        since_quotes
    );

    // History holds only what changed: the corrected quote and the revised rows (the
    // GPU day and the 8x H200 quote sent again unchanged are not new versions).
    assert_eq!(count_rows(&app.db, "index_quotes_history").await, 1);
    assert_eq!(
        count_rows(&app.db, "index_daily_history").await,
        revised.len() as i64
    );

    // The back office lists what each import changed, newest first.
    let list = app.imports(&admin, "").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    let newest = &list.data()[0];
    assert_eq!(newest["published_at"], p2.as_str());
    assert!(newest["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["index_code"] == "Server_Index" && c["quote_days_replaced"] == 1));
    let id = second.data()["import_id"].as_str().unwrap().to_string();
    let detail = app.import_detail(&admin, &id).await;
    let changes: BTreeMap<String, Value> = detail.data()["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["index_code"].as_str().unwrap().to_string(), c.clone()))
        .collect();
    assert_eq!(changes["Server_Index"]["quote_days_replaced"], 1);
    assert_eq!(
        changes["Server_Index"]["daily_rows_revised"],
        revised_of("Server_Index")
    );
    assert_eq!(changes["GPU_Index"]["quote_days_replaced"], 1);
    assert_eq!(changes["GPU_Index"]["daily_rows_revised"], 0);
    assert_eq!(
        changes["Hardware_Index"]["daily_rows_revised"],
        revised_of("Hardware_Index")
    );
}
