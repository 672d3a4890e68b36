//! Hostile input, as an attacker or a careless administrator would send it: every case
//! gets its documented refusal, the process stays up, and an ordinary query served
//! alongside still succeeds.
//!
//! A file per kind of attack: `requests` (keys outside the headers, duplicate JSON
//! names, permuted fields, secrets that must not be stored, an allow-list of garbage),
//! `floods` (keyless callers, setup before and after initialisation), `connections`
//! (a trickling body, too many connections, what the HTTP parser refuses) and
//! `workbooks` (import files built to exhaust memory, in process and in the real
//! binary). The check they share is here: [`still_serving`].

mod connections;
mod floods;
mod requests;
mod text;
mod workbooks;

use serde_json::json;

use crate::helpers::TestApp;

/// The process still answers, and a visitor's query still gets its data.
async fn still_serving(app: &TestApp) {
    let reply = app.query(json!({"api_name": "index_latest"})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.code(), 0, "{}", reply.body);
}
