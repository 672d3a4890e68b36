//! The switch to levels as ratios to the base day (D26) on a database that holds
//! values the chain made: the service restates every index when it starts, as one
//! vintage whose revisions carry the methodology's reason; `as_of` before it answers
//! the old values, and the restatement is owed and paid once.

use serde_json::json;

use super::*;
use crate::helpers::quotes::import;
use crate::helpers::{count_rows, select_value};

const REASON: &str = "methodology: levels as a ratio to the base day";

#[actix_web::test]
async fn the_restated_history_is_published_as_one_vintage_with_the_methodology_reason() {
    let (app, admin, key) = spawn().await;
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first_file()).await);
    let ratios = daily(&app, &key, json!({})).await;
    // The database as the chain left it: every base index's level after its base day a
    // millionth off (the drift D26 removes), and the restatement V26 owes such a
    // database.
    app.db
        .batch_execute(&format!(
            "UPDATE index_daily SET index_value = index_value + 0.000001 \
             WHERE pre_value IS NOT NULL AND index_code <> 'Hardware_Index'; \
             INSERT INTO restatements_due (reason) VALUES ('{REASON}');"
        ))
        .await
        .unwrap();
    let drifted: i64 = count_rows(
        &app.db,
        "index_daily WHERE pre_value IS NOT NULL AND index_code <> 'Hardware_Index'",
    )
    .await;
    assert_eq!(drifted, 6 * (DAYS.len() as i64 - 1));
    let chained = daily(&app, &key, json!({"as_of": "2099-12-31"})).await;
    let vintages = count_rows(&app.db, "vintages").await;

    // A start pays it; another start finds nothing owed.
    let restarted = app.another_instance().await;
    let again = restarted.another_instance().await;
    assert_eq!(count_rows(&app.db, "restatements_due").await, 0);
    assert_eq!(count_rows(&app.db, "vintages").await, vintages + 1);
    let (reason, import_id): (String, Option<i64>) = {
        let row = app
            .db
            .query_one(
                "SELECT reason, import_id FROM vintages ORDER BY vintage DESC LIMIT 1",
                &[],
            )
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!((reason.as_str(), import_id), (REASON, None));

    // Every changed row is a revision of that vintage with the reason; nothing else.
    let newest: i64 = select_value(&app.db, "SELECT max(vintage) FROM vintages").await;
    assert_eq!(
        count_rows(
            &app.db,
            &format!("index_revisions WHERE vintage = {newest} AND reason = '{REASON}'")
        )
        .await,
        drifted
    );
    assert_eq!(count_rows(&app.db, "index_revisions").await, drifted);

    // Today: the ratios again. Before the restatement: the chain's values.
    let today = daily(&again, &key, json!({})).await;
    let cells = |rows: &[Value]| rows.iter().map(values).collect::<Vec<_>>();
    assert_eq!(cells(&today), cells(&ratios));
    assert_eq!(
        cells(&daily(&again, &key, json!({"as_of": p1})).await),
        cells(&chained)
    );
    assert_ne!(cells(&chained), cells(&ratios));
    drop(restarted);
}
