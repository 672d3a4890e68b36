//! Events (D22), from outside: what each account hears on `GET /api/v1/events` after
//! imports, corrections and day boundaries, and how the feed answers.
//!
//! Files: `audience.rs` (who hears what and when: tiers, the delay window, a key's
//! range, corrections, two instances, a rolled-back import), `feed.rs` (the long poll,
//! paging, refusals, no quota). The data and the steps they share are here.

mod audience;
mod feed;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::helpers::quotes::{every_base_on, import, spawn_for_imports};
use crate::helpers::{Key, Session, TestApp};

const PUBLISHED: &str = "index.published";
const REVISED: &str = "index.revised";

/// Two weeks of open days: the free tier's cutoff (7 open days) on Friday 20 Nov 2026,
/// the test clock's today, is Wed 11 Nov; on Wed 25 Nov it is Mon 16 Nov.
const DAYS: [&str; 10] = [
    "20261109", "20261110", "20261111", "20261112", "20261113", "20261116", "20261117", "20261118",
    "20261119", "20261120",
];

/// Every base index on every day of [`DAYS`], so the composite is computed too.
fn quotes() -> Vec<(String, String, String, String, String)> {
    every_base_on(&DAYS)
}

/// An instance with the November calendar and [`quotes`] imported, its administrator,
/// a pro member's key and a free member's key.
async fn imported() -> (TestApp, Session, Key, Key) {
    let (app, admin, pro) = spawn_for_imports().await;
    let free = app.key_of_tier(&admin, "fiona", "free").await;
    import(&app, &admin, "quotes.csv", &quotes()).await;
    (app, admin, pro, free)
}

/// The events of one successful feed call.
fn events_of(reply: &crate::helpers::Reply) -> Vec<Value> {
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply.data()["events"].as_array().unwrap().clone()
}

/// Every event the key hears after `after` (walking the pages), and the `next` to go on from.
async fn all_events(app: &TestApp, key: &Key, after: &str) -> (Vec<Value>, String) {
    let mut after = after.to_string();
    let mut events = Vec::new();
    loop {
        let reply = app
            .events_with(&key.key, &format!("after={after}&limit=3"))
            .await;
        let page = events_of(&reply);
        after = reply.data()["next"].as_str().unwrap().to_string();
        if page.is_empty() {
            return (events, after);
        }
        events.extend(page);
    }
}

/// The trading days each (type, index) of `events` names, all events together.
fn days_by_index(events: &[Value]) -> BTreeMap<(String, String), Vec<String>> {
    let mut days: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for event in events {
        let kind = event["type"].as_str().unwrap().to_string();
        let code = event["data"]["index_code"].as_str().unwrap().to_string();
        let dates = event["data"]["trade_dates"].as_array().unwrap();
        days.entry((kind, code))
            .or_default()
            .extend(dates.iter().map(|d| d.as_str().unwrap().to_string()));
    }
    days
}

fn strings(days: &[&str]) -> Vec<String> {
    days.iter().map(|d| d.to_string()).collect()
}
