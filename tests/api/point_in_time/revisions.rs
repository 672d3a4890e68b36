//! Revisions (D21), from outside: after corrections, `index_revisions` lists exactly
//! the daily rows that were replaced by different ones, each with the value before and
//! after, the change and both publications, newest publication first; first
//! publications and rows sent again unchanged are not revisions. A free key sees the
//! same list cut to its indexes and its delay; `since`, `index_code` and the dates
//! filter it; pages walked one by one answer the whole list.

use std::collections::BTreeMap;
use std::str::FromStr;

use chrono::{TimeZone, Utc};
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::*;
use crate::helpers::quotes::import;
use crate::helpers::{count_rows, select_value};

const REVISION_FIELDS: [&str; 7] = [
    "index_code",
    "trade_date",
    "published_at",
    "previous_published_at",
    "previous_value",
    "index_value",
    "change",
];

async fn revisions(app: &TestApp, key: &Key, params: Value) -> Vec<Value> {
    rows(app, key, "index_revisions", &REVISION_FIELDS, params).await
}

/// index_value by (index_code, trade_date) of daily rows as `daily` reads them.
fn values_by_key(rows: &[Value]) -> BTreeMap<(String, String), String> {
    rows.iter()
        .map(|r| {
            (
                (r[1].as_str().unwrap().into(), r[0].as_str().unwrap().into()),
                r[2].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// The revision rows a publication at `at` of `after` over `before` (published at
/// `was`) should list: every row whose values changed, by index and date.
fn expected(before: &[Value], after: &[Value], at: &str, was: &str) -> Vec<Value> {
    let old = values_by_key(before);
    let changed: BTreeMap<(String, String), &Value> = before
        .iter()
        .zip(after)
        .filter(|(a, b)| values(a) != values(b))
        .map(|(a, b)| {
            assert_eq!(key_of(a), key_of(b));
            (
                (b[1].as_str().unwrap().into(), b[0].as_str().unwrap().into()),
                b,
            )
        })
        .collect();
    changed
        .into_iter()
        .map(|((code, date), row)| {
            let previous = &old[&(code.clone(), date.clone())];
            let now = row[2].as_str().unwrap();
            let change = Decimal::from_str(now).unwrap() - Decimal::from_str(previous).unwrap();
            json!([code, date, at, was, previous, now, format!("{change:.6}")])
        })
        .collect()
}

/// A correction of Server_Index's `8x H100` on `date` to `price`; GPU_Index's 20261104
/// sent again unchanged with it.
fn correction(first: &[Quote], date: &str, price: &str) -> Vec<Quote> {
    let mut quotes: Vec<Quote> = first
        .iter()
        .filter(|q| {
            (q.0 == date && q.1 == "Server_Index") || (q.0 == "20261104" && q.1 == "GPU_Index")
        })
        .cloned()
        .collect();
    for q in &mut quotes {
        if q.2 == "8x H100" {
            q.4 = price.into();
        }
    }
    quotes
}

#[actix_web::test]
async fn corrections_are_listed_with_before_after_and_change_newest_first() {
    let (app, admin, pro) = spawn().await;
    let first = first_file();
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first).await);
    let daily_1 = daily(&app, &pro, json!({})).await;
    // A first publication is not a revision.
    assert!(revisions(&app, &pro, json!({})).await.is_empty());

    let p2 = published_at(
        &import(
            &app,
            &admin,
            "quotes.csv",
            &correction(&first, "20261103", "1234.5"),
        )
        .await,
    );
    let daily_2 = daily(&app, &pro, json!({})).await;
    let second = expected(&daily_1, &daily_2, &p2, &p1);
    assert!(
        second.len() >= 2,
        "Server_Index and the composite: {second:?}"
    );
    assert!(
        second.iter().all(|r| r[0] != "GPU_Index"),
        "sent again unchanged"
    );
    assert_eq!(revisions(&app, &pro, json!({})).await, second);

    // A second correction, of a later day: listed first; a row revised again names the
    // publication it replaced.
    let third_file = correction(&first, "20261105", "999.25");
    let p3 = published_at(&import(&app, &admin, "quotes.csv", &third_file).await);
    let daily_3 = daily(&app, &pro, json!({})).await;
    let third = expected(&daily_2, &daily_3, &p3, &p1);
    let third: Vec<Value> = third
        .into_iter()
        .map(|mut r| {
            // Rows the second correction had already revised were published at p2.
            let revised_before = second.iter().any(|s| s[0] == r[0] && s[1] == r[1]);
            if revised_before {
                r[3] = json!(p2);
            }
            r
        })
        .collect();
    assert!(third.iter().any(|r| r[3] == p2.as_str()), "{third:?}");
    let all: Vec<Value> = third.iter().chain(&second).cloned().collect();
    assert_eq!(revisions(&app, &pro, json!({})).await, all);

    // Filters: since (after, not at), index_code, dates.
    assert_eq!(revisions(&app, &pro, json!({"since": p2})).await, third);
    assert_eq!(revisions(&app, &pro, json!({"since": p1})).await, all);
    assert!(revisions(&app, &pro, json!({"since": p3})).await.is_empty());
    let hardware: Vec<Value> = all
        .iter()
        .filter(|r| r[0] == "Hardware_Index")
        .cloned()
        .collect();
    assert!(!hardware.is_empty());
    assert_eq!(
        revisions(&app, &pro, json!({"index_code": "Hardware_Index"})).await,
        hardware
    );
    let window: Vec<Value> = all
        .iter()
        .filter(|r| r[1].as_str().unwrap() >= "20261104" && r[1].as_str().unwrap() <= "20261105")
        .cloned()
        .collect();
    assert!(!window.is_empty() && window.len() < all.len());
    assert_eq!(
        revisions(
            &app,
            &pro,
            json!({"start_date": "20261104", "end_date": "2026-11-05"})
        )
        .await,
        window
    );

    // Walked two rows a page, the pages are the list (later pages start after a
    // remembered boundary, so this walks the descending keyset too).
    let mut walked = Vec::new();
    loop {
        let reply = app
            .query_with(
                json!({"api_name": "index_revisions", "limit": 2, "offset": walked.len()}),
                Some(&pro.key),
            )
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        walked.extend(reply.items().iter().cloned());
        if reply.data()["has_more"] == false {
            break;
        }
    }
    assert_eq!(walked, all);

    // The migration that made the list derives from history exactly what the imports
    // wrote (its SELECT, run on this history).
    let migration = include_str!("../../../sql/V20__index_revisions.sql");
    let backfill = &migration[migration.rfind("SELECT nv.published_at").unwrap()..];
    let backfill = backfill.trim_end().trim_end_matches(';');
    let differ = format!(
        "SELECT count(*) FROM ((({backfill}) EXCEPT ({WRITTEN})) \
         UNION ALL (({WRITTEN}) EXCEPT ({backfill}))) d"
    );
    // V20's columns (the reason came later, with D26).
    const WRITTEN: &str = "SELECT published_at, index_code, trade_date, previous_published_at, \
                           previous_value, index_value, change, vintage FROM index_revisions";
    let written = count_rows(&app.db, "index_revisions").await;
    assert_eq!(written, all.len() as i64);
    let differing: i64 = select_value(&app.db, &differ).await;
    assert_eq!(differing, 0);
    // The default fields are D21's, in its order.
    let reply = app
        .query_with(json!({"api_name": "index_revisions"}), Some(&pro.key))
        .await;
    assert_eq!(
        reply.data()["fields"],
        json!(REVISION_FIELDS),
        "{}",
        reply.body
    );
}

#[actix_web::test]
async fn a_free_key_sees_the_revisions_of_its_indexes_within_its_delay() {
    let (app, admin, pro) = spawn().await;
    let free = app.key_of_tier(&admin, "fred", "free").await;
    // Thursday 2026-11-12 in the service time zone: the free tier's 7 trading days of
    // delay put its cutoff on 20261103.
    app.clock
        .set(Utc.with_ymd_and_hms(2026, 11, 12, 4, 0, 0).unwrap());
    let first = first_file();
    import(&app, &admin, "quotes.csv", &first).await;
    import(
        &app,
        &admin,
        "quotes.csv",
        &correction(&first, "20261103", "1234.5"),
    )
    .await;
    let all = revisions(&app, &pro, json!({})).await;
    let seen: Vec<Value> = all
        .iter()
        .filter(|r| r[0] != "Hardware_Index" && r[1].as_str().unwrap() <= "20261103")
        .cloned()
        .collect();
    assert!(!seen.is_empty() && seen.len() < all.len(), "{all:?}");
    assert_eq!(revisions(&app, &free, json!({})).await, seen);
    // A member index is refused as it is on index_daily.
    let ask =
        |api_name: &str| json!({"api_name": api_name, "params": {"index_code": "Hardware_Index"}});
    let daily = app.query_with(ask("index_daily"), Some(&free.key)).await;
    let revised = app
        .query_with(ask("index_revisions"), Some(&free.key))
        .await;
    assert_ne!(daily.code(), 0, "{}", daily.body);
    assert_eq!(revised.code(), daily.code(), "{}", revised.body);
    assert_eq!(revised.status, daily.status);
}

#[actix_web::test]
async fn a_bad_since_is_refused_with_the_parameter_named() {
    let (app, _admin, pro) = spawn().await;
    for since in ["20261103", "2026-11-03T10:00:00", "yesterday"] {
        let reply = app
            .query_with(
                json!({"api_name": "index_revisions", "params": {"since": since}}),
                Some(&pro.key),
            )
            .await;
        assert_eq!(reply.code(), 40001, "{since}: {}", reply.body);
        assert!(reply.body.to_string().contains("since"), "{}", reply.body);
    }
}

#[actix_web::test]
async fn an_index_page_lists_its_revisions_and_opens_a_day_as_it_stood() {
    let (app, admin, pro) = spawn().await;
    let first = first_file();
    let p1 = published_at(&import(&app, &admin, "quotes.csv", &first).await);
    let page = app.page("/indexes/Server_Index").await;
    assert_eq!(page.status, 200, "{}", page.html);
    page.assert_has(r#"<section id="revisions""#);
    page.assert_has("has been revised");
    let fields = [
        "index_code",
        "trade_date",
        "previous_value",
        "index_value",
        "change",
    ];
    import(
        &app,
        &admin,
        "quotes.csv",
        &correction(&first, "20261103", "1234.5"),
    )
    .await;
    // The member's revisions of one index, in these fields.
    let revisions_of = |code: &str| {
        let params = json!({"index_code": code});
        rows(&app, &pro, "index_revisions", &fields, params)
    };
    let listed = revisions_of("Server_Index").await;
    let day = listed
        .iter()
        .find(|r| r[1] == "20261103")
        .expect("3 Nov revised");
    let (before, after, change) = (
        day[2].as_str().unwrap(),
        day[3].as_str().unwrap(),
        day[4].as_str().unwrap(),
    );

    // A visitor (free delay: the fixture's days are all within it) sees the revision.
    let page = app.page("/indexes/Server_Index").await;
    assert_eq!(page.status, 200, "{}", page.html);
    page.assert_lacks("has been revised");
    let link = format!("/indexes/Server_Index?range=3M&as_of={p1}&day=20261103");
    page.assert_has(&format!(
        r#"<a href="{}">3 Nov 2026</a>"#,
        link.replace('&', "&#38;")
    ));
    page.assert_has(&format!(
        r#"<td class="num">{before}</td><td class="num">{after}</td>"#
    ));
    page.assert_has(change);
    // The member's page lists the composite's too.
    let hardware = revisions_of("Hardware_Index").await;
    assert!(!hardware.is_empty());

    // The link: the index as it stood before the revision, up to that day.
    let past = app.page(&link).await;
    assert_eq!(past.status, 200, "{}", past.html);
    past.assert_has(r#"id="past""#);
    past.assert_has("before any later revision");
    // The daily table's row of that day holds the value before.
    let row = |value: &str| {
        format!(
            r#"<td>3 Nov 2026 <code class="wire">20261103</code></td><td class="num">{value}</td>"#
        )
    };
    past.assert_has(&row(before));
    past.assert_lacks(&row(after));
    page.assert_has(&row(after));
    past.assert_lacks("4 Nov 2026 <code");
    // Its range links stay in the past view.
    past.assert_has(&format!(r#"?range=1M&#38;as_of={p1}&#38;day=20261103""#));

    // Refused with a page, never a 500.
    for bad in [
        "/indexes/Server_Index?as_of=yesterday",
        "/indexes/Server_Index?as_of=2026-11-03T10:00:00",
        "/indexes/Server_Index?day=20261103",
        "/indexes/Server_Index?as_of=2026-11-03T10:00:00Z&day=2026113",
    ] {
        let page = app.page(bad).await;
        assert_eq!(page.status, 400, "{bad}: {}", page.html);
        page.assert_has("<!doctype html>");
    }
}
