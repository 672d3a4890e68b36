//! The edges of point-in-time reads: a specification an import dropped leaves its day
//! but stays in the day's past; malformed instants are refused with the parameter
//! named; a second instance sees a correction within a second and keeps the past.

use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::helpers::eventually;
use crate::helpers::quotes::import;

#[actix_web::test]
async fn a_dropped_specification_leaves_the_day_and_stays_in_its_past() {
    let (app, admin, key) = spawn().await;
    let first = first_file();
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first).await);
    // 20261105's Server_Index again, with 8x H200 alone.
    let day = vec![quote("20261105", "Server_Index", "8x H200", "1", "1047")];
    let p2 = published_at(&import(&app, &admin, "quotes.csv", &day).await);

    let server = json!({"index_code": "Server_Index", "trade_date": "20261105"});
    let now: Vec<Value> = quotes(&app, &key, server.clone()).await;
    assert_eq!(now.len(), 1);
    assert_eq!(now[0][2], "8x H200");
    assert_eq!(now[0][5], p2.as_str());
    let mut past = server.clone();
    past["as_of"] = json!(p1);
    let then = quotes(&app, &key, past).await;
    let specs: Vec<&str> = then.iter().map(|r| r[2].as_str().unwrap()).collect();
    assert_eq!(specs, ["8x H100", "8x H200"]);
    // A sync replaces the day whole: the one row left.
    let since = quotes(&app, &key, json!({"updated_since": p1})).await;
    assert_eq!(since, now);
}

#[actix_web::test]
async fn bad_instants_are_refused_with_the_parameter_named() {
    let (app, _admin, key) = spawn().await;
    for (params, name) in [
        (json!({"as_of": "2026-13-01"}), "as_of"),
        (json!({"as_of": "2026-11-20T10:00:00"}), "as_of"),
        (json!({"as_of": "yesterday"}), "as_of"),
        (json!({"updated_since": "20261120"}), "updated_since"),
        (
            json!({"updated_since": "2026-11-20 10:00"}),
            "updated_since",
        ),
    ] {
        let reply = app
            .query_with(
                json!({"api_name": "index_daily", "params": params}),
                Some(&key.key),
            )
            .await;
        reply.assert_error_mentioning(400, 40001, name);
    }
    // Datasets without history do not take them.
    let reply = app
        .query_with(
            json!({"api_name": "trade_calendar", "params": {"as_of": "20261120"}}),
            Some(&key.key),
        )
        .await;
    reply.assert_error(400, 40001);
}

/// An instant with another offset is the same instant: the publication written as
/// +08:00 sees the import, a microsecond earlier does not.
#[actix_web::test]
async fn an_offset_names_the_same_instant() {
    let (app, admin, key) = spawn().await;
    let published = instant(&published_at(
        &import(&app, &admin, "quotes.csv", &first_file()).await,
    ));
    let shanghai = chrono::FixedOffset::east_opt(8 * 3600).unwrap();
    let at = |t: DateTime<Utc>| {
        t.with_timezone(&shanghai)
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
    };
    assert!(at(published).ends_with("+08:00"));
    let then = daily(&app, &key, json!({"as_of": at(published)})).await;
    assert_eq!(then, daily(&app, &key, json!({})).await);
    assert!(!then.is_empty());
    let before = published - chrono::Duration::microseconds(1);
    assert!(daily(&app, &key, json!({"as_of": at(before)}))
        .await
        .is_empty());
}

#[actix_web::test]
async fn a_second_instance_sees_a_correction_within_a_second_and_its_past_forever() {
    let (a, admin, key) = spawn().await;
    let b = a.another_instance().await;
    let first = first_file();
    let p1 = published_at(&import(&a, &admin, "quotes.csv", &first).await);
    // b caches today's page and the page as of p1.
    let today_1 = daily(&b, &key, json!({"index_code": "Server_Index"})).await;
    let as_of_1 = daily(&b, &key, json!({"index_code": "Server_Index", "as_of": p1})).await;
    assert_eq!(today_1, as_of_1);

    let correction = vec![
        quote("20261104", "Server_Index", "8x H100", "0.5", "999"),
        quote("20261104", "Server_Index", "8x H200", "0.5", "1001"),
    ];
    import(&a, &admin, "quotes.csv", &correction).await;
    let changed = eventually(Duration::from_secs(1), || async {
        daily(&b, &key, json!({"index_code": "Server_Index"})).await != today_1
    })
    .await;
    assert!(changed, "instance b still answers the old values");
    assert_eq!(
        daily(&b, &key, json!({"index_code": "Server_Index", "as_of": p1})).await,
        as_of_1
    );
    assert_eq!(
        daily(&a, &key, json!({"index_code": "Server_Index"})).await,
        daily(&b, &key, json!({"index_code": "Server_Index"})).await
    );
}
