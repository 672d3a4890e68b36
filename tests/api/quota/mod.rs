//! Step 7: per-minute and daily key quotas (spec part 8, D6), their headers, what
//! counts, usage in the back office, the call log, and a database outage. The account's
//! own quotas are in `quota_account`, the quota across instances in `quota_instances`.
//!
//! The test clock stands at 2026-11-20 04:00:00 UTC: 60 s left in the minute, 72000 s
//! in the UTC day.
//!
//! A file per topic: `limits` (the two windows, their refusals and headers, tier and key
//! changes), `counting` (which calls count, and usage as owners and administrators see
//! it), `call_log` (each counted call logged, old rows and months pruned) and `leases`
//! (the leases an instance holds, with the database and without it). The queries they
//! share are here.

mod call_log;
mod counting;
mod leases;
mod limits;

use serde_json::{json, Value};

use crate::helpers::{Key, Reply, TestApp};

fn latest() -> Value {
    json!({"api_name": "index_latest"})
}

fn daily(code: &str) -> Value {
    json!({"api_name": "index_daily", "params": {"index_code": code}})
}

async fn call(app: &TestApp, key: &Key) -> Reply {
    app.query_with(latest(), Some(&key.key)).await
}
