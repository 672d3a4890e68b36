//! The demo's past (D26): each demo day published at its own publication time, so
//! `as_of` a month back answers what stood then; the correction with its reason; the
//! exchange's 2026 holidays closed.

use serde_json::json;

use super::*;
use crate::helpers::{spawn_with, Spawn};

#[actix_web::test]
async fn the_demo_answers_as_of_a_month_back_with_what_stood_then() {
    let app = spawn_with(Spawn::demo()).await;
    let read = |params: Value| {
        json!({"api_name": "index_daily", "params": params, "limit": 5000,
               "fields": ["trade_date", "index_code", "index_value", "published_at"]})
    };
    let now = app.query(read(json!({"index_code": "GPU_Index"}))).await;
    assert_eq!(now.code(), 0, "{}", now.body);
    let then = app
        .query(read(
            json!({"index_code": "GPU_Index", "as_of": "2026-10-20"}),
        ))
        .await;
    assert_eq!(then.code(), 0, "{}", then.body);
    let then = then.items().clone();
    assert!(then.len() > 100, "{then:?}");
    // What stood on 20 October is today's rows up to that day (the correction came
    // later, for a later day), each published at its day's 18:00 in Shanghai.
    let up_to: Vec<Value> = now
        .items()
        .iter()
        .filter(|r| r[0].as_str().unwrap() <= "20261020")
        .cloned()
        .collect();
    assert_eq!(then, up_to);
    let last = then.last().unwrap();
    assert_eq!(last[0], "20261020");
    assert_eq!(last[3], "2026-10-20T10:00:00.000000Z");

    // The correction's revisions say why.
    let revisions = app
        .query(json!({"api_name": "index_revisions", "fields": ["index_code", "reason"]}))
        .await;
    assert_eq!(revisions.code(), 0, "{}", revisions.body);
    let items = revisions.items();
    assert!(!items.is_empty(), "{}", revisions.body);
    assert!(items
        .iter()
        .all(|r| r[1] == iq_actors::demo::CORRECTION_NOTE));

    // The Spring Festival is closed, the day after it open.
    let calendar = app
        .query(json!({"api_name": "trade_calendar",
                      "params": {"start_date": "20260213", "end_date": "20260225"}}))
        .await;
    let days: Vec<&str> = calendar
        .items()
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert_eq!(days, ["20260213", "20260224", "20260225"]);
}
