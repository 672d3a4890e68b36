//! The back office (D23 login limits, D7, D9 membership), one file per resource: set-up,
//! login and sessions, the guard (session, CSRF token, role), users, keys, tiers and
//! index settings. What they share is here; endpoint calls are `TestApp` methods.

use chrono::{Duration, TimeZone, Utc};
use iq_actors::clock::Clock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    now, spawn_app, spawn_with, spawn_with_fixture, Reply, Session, Spawn, TestApp, PASSWORD,
};

/// An instance that takes `X-Forwarded-For` from the test (127.0.0.1 is a trusted
/// proxy), so one test can log in from several addresses.
async fn spawn_behind_a_proxy() -> TestApp {
    spawn_with(
        Spawn::default().tuned(|s| s.http.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()]),
    )
    .await
}

/// The three scopes of the public datasets, sorted.
const ALL_SCOPES: [&str; 3] = ["calendar:read", "index:read", "quote:read"];

/// The free tier's settings as the migration seeds them.
fn free_defaults() -> Value {
    json!({"per_minute": 10, "per_day": 10, "max_rows": 5000, "max_keys": 1,
           "delay_days": 7, "member_indexes": false, "max_webhooks": 1})
}

/// Every string in a JSON value, object keys included.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

fn sorted_scopes(data: &Value) -> Vec<String> {
    let mut scopes: Vec<String> = data["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    scopes.sort();
    scopes
}

/// `index_code` of every row a visitor's `index_basic` returns.
async fn visitor_index_codes(app: &TestApp) -> Vec<Value> {
    let reply = app.query(json!({"api_name": "index_basic"})).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply.column("index_code")
}

mod audit;
mod guard;
mod import_detail;
mod index_facts;
mod indexes;
mod key_rotation;
mod keys;
mod keys_admin;
mod passwords;
mod protection;
mod sessions;
mod setup;
mod sign_in_ticket;
mod tiers;
pub(crate) mod two_factor;
mod users;
mod users_list;
