//! API-key identity: every row of D3, the order of the check chain, what a key sees
//! (D4), changes taking effect on the next request, across instances too, and the
//! client address behind trusted proxies.
//!
//! A file per topic: `refusals` (the rows of D3 and which step's error wins), `access`
//! (scopes, index ranges, member indexes, fields and delay, and a session's view),
//! `caches` (changes reaching every instance's caches, a cached key without the
//! database) and `proxies` (the allow-list and the client address). The query they share
//! is here.

mod access;
mod caches;
mod proxies;
mod refusals;

use serde_json::{json, Value};

fn daily(index_code: &str) -> Value {
    json!({"api_name": "index_daily", "params": {"index_code": index_code}})
}
