//! Quota usage survives a graceful shutdown.
//!
//! The real binary runs as a child process with `QUOTA_FLUSH_MS=60000`, so its flush
//! timer cannot fire during the test: a free key (10 a minute, 10 a day) may have one
//! call unreported (1% of its day, at least one call: what a crash may cost it), so
//! each further call first writes the one before, and the last call reaches Postgres
//! only through the shutdown drain. The key makes 3 calls, holding one more leased;
//! SIGTERM must end the process with status 0 after it logs the usage written; a second
//! process on the same database must show the 3 calls and admit exactly the 7 left
//! (the given-back lease included), then refuse.
//!
//! The binary keeps the system clock, so "today" is the real UTC day; a run that would
//! start too close to UTC midnight first waits for the new day.

use std::time::{Duration, Instant};

use chrono::{NaiveTime, Utc};
use serde_json::{json, Value};

use crate::child::{clear_of_utc_midnight, database_name, drop_database, Output, Service};
use crate::helpers::{create_database, Key, Session, TestApp};

/// The flush timer at its slowest, and logs at `info` (the shutdown lines).
const CHILD_ENV: &[(&str, &str)] = &[("QUOTA_FLUSH_MS", "60000"), ("RUST_LOG", "info")];

/// The free tier's daily (and per-minute) limit.
const FREE_PER_DAY: i64 = 10;

/// Calls made before the shutdown: 3, so the instance holds a leased call it has not
/// spent (blocks of 2 and 2), which the shutdown must give back.
const BEFORE: i64 = 3;

/// Safely under the 60 s flush interval: until then the timer cannot have flushed.
const TIMER_CANNOT_HAVE_FIRED: Duration = Duration::from_secs(50);

fn latest() -> Value {
    json!({"api_name": "index_latest"})
}

fn today() -> String {
    Utc::now().format("%Y%m%d").to_string()
}

/// `calls_today` of `key` in its owner's key list.
async fn calls_today(app: &TestApp, owner: &Session, key: &Key) -> i64 {
    let list = app.get_as(owner, "/api/v1/keys").await;
    assert_eq!(list.code(), 0, "{}", list.body);
    let entry = list
        .data()
        .as_array()
        .expect("a list of keys")
        .iter()
        .find(|k| k["id"] == key.id.as_str())
        .unwrap_or_else(|| panic!("key {} not listed: {}", key.id, list.body));
    entry["calls_today"].as_i64().expect("calls_today")
}

/// The key's day window as Postgres holds it: (`granted`, `used`).
async fn day_window(app: &TestApp, key: &Key) -> (i64, i64) {
    let row = app
        .db
        .query_one(
            "SELECT granted, used FROM quota_windows \
             WHERE key_id = $1 AND span = 'day' AND window_start = $2",
            &[
                &key.id,
                &Utc::now().date_naive().and_time(NaiveTime::MIN).and_utc(),
            ],
        )
        .await
        .expect("today's day window of the key");
    (row.get(0), row.get(1))
}

/// Rows of the key's call log.
async fn logged_calls(app: &TestApp, key: &Key) -> i64 {
    let row = app
        .db
        .query_one(
            "SELECT count(*) FROM call_log WHERE key_id = $1",
            &[&key.id],
        )
        .await
        .unwrap();
    row.get(0)
}

/// A clean, graceful exit: status 0 without a kill, usage written, no error logged.
fn assert_graceful(output: &Output, which: &str) {
    let logs = output.logs();
    let context = || {
        format!(
            "{which} process (exit: {}, killed: {}):\nstdout:\n{}\nstderr:\n{}",
            output.status, output.killed, output.stdout, output.stderr
        )
    };
    assert!(!output.killed, "SIGTERM did not stop the {}", context());
    assert!(output.status.success(), "no exit 0 from the {}", context());
    assert!(
        logs.contains("quota usage written"),
        "no \"quota usage written\" from the {}",
        context()
    );
    // The JSON lines' level field, as the error check below spells it.
    assert!(logs.contains("\"level\":\"INFO\""), "{}", context());
    for alarm in [
        "could not be written",
        "quota actor gone",
        "server failed",
        "\"level\":\"ERROR\"",
    ] {
        assert!(
            !logs.contains(alarm),
            "{alarm:?} in the logs of the {}",
            context()
        );
    }
}

#[actix_web::test]
async fn quota_usage_survives_a_graceful_shutdown() {
    clear_of_utc_midnight().await;
    let database_url = create_database().await;
    let database_name = database_name(&database_url);

    // First process: a free key spends 3 of its 10 and holds one more.
    let spawned = Instant::now();
    let mut first = Service::start(&database_url, CHILD_ENV).await;
    let app = TestApp::attach(&first.base, &database_url).await;
    let admin = app.admin().await;
    let owner = app.user(&admin, "fern", "free").await;
    let key = app.new_key(&owner, json!({"name": "main"})).await;
    for n in 1..=BEFORE {
        let reply = app.query_with(latest(), Some(&key.key)).await;
        assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
        assert_eq!(reply.rate_remaining(), FREE_PER_DAY - n, "call {n}");
    }
    // Every call but the last was written before the next was admitted; the last one
    // and the unspent lease are the shutdown's doing.
    if spawned.elapsed() < TIMER_CANNOT_HAVE_FIRED {
        assert_eq!(calls_today(&app, &owner, &key).await, BEFORE - 1);
        let (granted, used) = day_window(&app, &key).await;
        assert_eq!(used, BEFORE - 1, "used before the shutdown");
        // The precondition of the give-back check below: the instance holds budget it
        // leased and has not spent (leases come in blocks of a quarter of what is left:
        // 2, then 2 more, for the third call).
        assert!(
            granted > BEFORE,
            "granted {granted} after {BEFORE} calls: no unspent lease to give back"
        );
        // The call records go with the same flushes, so the last one is not there yet.
        assert!(logged_calls(&app, &key).await < BEFORE);
    }

    let output = first.stop();
    assert_graceful(&output, "first");
    // The drain wrote the calls and the call log, and gave back the budget leased but
    // not spent (`used` counts only in day windows).
    assert_eq!(
        day_window(&app, &key).await,
        (BEFORE, BEFORE),
        "(granted, used) of today's window after the shutdown"
    );
    assert_eq!(logged_calls(&app, &key).await, BEFORE);

    // Second process on the same database: the sessions and the usage are still there.
    let mut second = Service::start(&database_url, CHILD_ENV).await;
    let app = TestApp::attach(&second.base, &database_url).await;
    assert_eq!(calls_today(&app, &owner, &key).await, BEFORE);
    let path = format!("/api/v1/admin/keys/{}/usage?days=1", key.id);
    let usage = app.get_as(&admin, &path).await;
    assert_eq!(usage.code(), 0, "{}", usage.body);
    assert_eq!(usage.data()["key_id"], key.id.as_str());
    assert_eq!(usage.data()["tier"], "free");
    assert_eq!(usage.data()["per_day"], FREE_PER_DAY);
    assert_eq!(
        usage.data()["days"],
        json!([{"date": today(), "calls": BEFORE}])
    );

    // Exactly the rest of the day's budget: no call admitted twice, none stranded.
    for n in BEFORE + 1..=FREE_PER_DAY {
        let reply = app.query_with(latest(), Some(&key.key)).await;
        assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
        assert_eq!(reply.rate_remaining(), FREE_PER_DAY - n, "call {n}");
    }
    let refused = app.query_with(latest(), Some(&key.key)).await;
    refused.assert_error(429, 42902);
    assert_eq!(refused.rate_remaining(), 0);

    let output = second.stop();
    assert_graceful(&output, "second");
    assert_eq!(day_window(&app, &key).await, (FREE_PER_DAY, FREE_PER_DAY));
    assert_eq!(logged_calls(&app, &key).await, FREE_PER_DAY);
    drop(app);
    drop_database(&database_name).await;
}

/// With `SHUTDOWN_DELAY_MS`, a stop signal first drains: `/readyz` turns 503 so the
/// balancer takes the instance out, queries are still answered but with
/// `Connection: close`, and only after the delay does the process stop, gracefully.
#[actix_web::test]
async fn a_stop_signal_drains_before_the_server_stops_accepting() {
    let database_url = create_database().await;
    let mut service = Service::start(
        &database_url,
        &[("SHUTDOWN_DELAY_MS", "2000"), ("RUST_LOG", "info")],
    )
    .await;
    let http = crate::helpers::http_client();
    let ready = |http: reqwest::Client, base: String| async move {
        http.get(format!("{base}/readyz")).send().await.unwrap()
    };
    assert_eq!(
        ready(http.clone(), service.base.clone()).await.status(),
        200
    );

    service.terminate();
    let draining = crate::helpers::eventually(Duration::from_secs(2), || {
        let (http, base) = (http.clone(), service.base.clone());
        async move { ready(http, base).await.status() == 503 }
    })
    .await;
    assert!(draining, "/readyz still ready after SIGTERM");
    // Still serving, but every answer closes its connection.
    let answer = http
        .post(format!("{}/api/v1/query", service.base))
        .json(&latest())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer
            .headers()
            .get("connection")
            .map(|v| v.to_str().unwrap()),
        Some("close")
    );
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["code"], 0, "{body}");

    let output = service.stop_cleanly();
    assert!(output.logs().contains("draining"), "{}", output.logs());
    drop_database(&database_name(&database_url)).await;
}
