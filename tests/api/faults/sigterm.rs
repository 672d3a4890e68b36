//! SIGTERM under load, on the real binary with `SHUTDOWN_DELAY_MS` unset (no drain):
//! every request the service accepted gets a complete answer, the process exits 0, and
//! the usage it writes on the way out matches the answers exactly.
//!
//! Eight clients send queries with one pro key as fast as they are answered, each on a
//! connection of its own; once the load is steady the process gets one SIGTERM and the
//! clients keep sending, each until it cannot connect any more (reqwest's
//! `is_connect`: the listener closed). Asserted:
//!
//! - before the signal every answer is a success; at and after it, an answer is a
//!   success in full (never an error status, never a body cut short) or there is no
//!   answer at all;
//! - every query the service handled (its access log has a `request completed` line
//!   with the `request_id`) reached its client as a success, and the log holds no other
//!   query: a client that got no answer sent a request the service never started. This
//!   is what "accepted" means here, rather than "any connection that did not fail to
//!   connect": in the first milliseconds after SIGTERM the kernel or actix still takes
//!   new connections and then closes them unserved (reset, or closed before an answer),
//!   in most runs for a few of the requests; the test prints how many;
//! - the process exits 0 by itself, logs "quota usage written" and no error;
//! - read from the database: today's day window of the key holds `used` = `granted` =
//!   the 200 answers (the unspent lease given back), so does the account's, and the
//!   call log holds one row, code 0, per 200 answer.
//!
//! `Service::stop` sends the one SIGTERM and waits for the exit; it runs on a thread of
//! its own so the clients go on meanwhile. (`Service::terminate` followed by `stop`
//! would send a second SIGTERM, which the service takes as "stop without waiting for
//! the requests in flight".) The binary keeps the system clock, so quota windows are
//! real UTC days; a run too close to UTC midnight first waits for the new day.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::{NaiveTime, Utc};
use serde_json::{json, Value};

use super::{day_window, logged_calls, until, Answer, Clients, Target};
use crate::child::{clear_of_utc_midnight, Service};
use crate::helpers::{create_database, DropDatabase, TestApp};

const CLIENTS: usize = 8;
/// `SHUTDOWN_DELAY_MS` unset: the listener closes at once. Info logs: the shutdown
/// lines and an access line per request (`ACCESS_LOG` defaults to `all`).
const ENV: &[(&str, &str)] = &[("RUST_LOG", "info")];
/// Successes before the signal, so the load is steady when it comes (well under the
/// pro tier's 10000 a minute).
const WARM: usize = 200;
/// How long the clients may take to all see the listener closed.
const CLOSED: Duration = Duration::from_secs(20);

fn describe(list: &[&Answer]) -> String {
    let lines: Vec<String> = list.iter().take(10).map(|a| a.describe()).collect();
    format!("{} answers:\n{}", list.len(), lines.join("\n"))
}

/// Request ids of the queries the service answered, from its access log (a line
/// `request completed` per request, written as the answer leaves the handlers).
fn handled_queries(stderr: &str) -> HashSet<String> {
    stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["message"] == "request completed")
        .filter(|line| line["url.path"] == "/api/v1/query")
        .filter_map(|line| line["request_id"].as_str().map(str::to_string))
        .collect()
}

#[actix_web::test]
async fn sigterm_under_load_answers_every_accepted_request_and_counts_them() {
    clear_of_utc_midnight().await;
    let database_url = create_database().await;
    let _database = DropDatabase::new(database_url.clone());
    let service = Service::start(&database_url, ENV).await;
    let app = TestApp::attach(&service.base, &database_url).await;
    let owner = app.member("sigrid", "pro").await;
    let key = app.new_key(&owner, json!({"name": "load"})).await;
    let target = Target {
        base: service.base.clone(),
        key: key.key.clone(),
    };

    // A connection per request, so every request goes through the listener.
    let http = crate::helpers::http_client_builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client");
    let clients = Clients::start(
        http,
        CLIENTS,
        vec![target],
        |_, _| Some(0),
        Duration::from_millis(1),
        |answer| answer.connect_error,
    );
    clients
        .await_successes(WARM, Duration::from_secs(30), "before the signal")
        .await;

    let signalled = Instant::now();
    let mut service = service;
    let stopping = std::thread::spawn(move || service.stop());
    let closed = until(CLOSED, || clients.all_ended()).await;
    let answers = clients.finish().await;
    let output = stopping.join().expect("the stopping thread");
    let logs = || {
        format!(
            "exit: {}, killed: {}\nstdout:\n{}\nstderr:\n{}",
            output.status, output.killed, output.stdout, output.stderr
        )
    };
    assert!(closed, "not every client saw the listener closed");
    assert!(
        !output.killed,
        "SIGTERM did not stop the service: {}",
        logs()
    );
    assert!(output.status.success(), "no exit 0: {}", logs());
    let text = output.logs();
    assert!(text.contains("quota usage written"), "{}", logs());
    assert!(!text.contains("\"level\":\"ERROR\""), "{}", logs());

    // Answers are successes, in full; the rest, at the signal or after it, got no answer
    // at all: no error status, no body cut short.
    let failed: Vec<&Answer> = answers
        .iter()
        .filter(|a| !a.ok() && (a.status != 0 || a.ended < signalled))
        .collect();
    assert!(failed.is_empty(), "{}", describe(&failed));
    // Every request the service handled reached its client in full; so a client that
    // got no answer sent a request the service never started.
    let answered: HashSet<String> = answers
        .iter()
        .filter(|a| a.ok())
        .filter_map(|a| a.request_id.clone())
        .collect();
    let handled = handled_queries(&output.stderr);
    let lost: Vec<&String> = handled.difference(&answered).collect();
    assert!(lost.is_empty(), "handled but not answered: {lost:?}");
    let ok = answers.iter().filter(|a| a.ok()).count();
    assert_eq!(handled.len(), ok, "queries in the access log, successes");
    let in_flight = answers
        .iter()
        .filter(|a| a.sent < signalled && a.ended > signalled && a.ok())
        .count();
    let unstarted: Vec<&Answer> = answers
        .iter()
        .filter(|a| a.status == 0 && !a.connect_error)
        .collect();
    eprintln!(
        "{ok} successes, {in_flight} of them answered after the signal while in flight, \
         {} connections refused, {} connections closed without starting the request",
        answers.iter().filter(|a| a.connect_error).count(),
        unstarted.len()
    );

    // What it wrote on the way out: each 200 once, and no budget kept.
    let ok = ok as i64;
    let day = Utc::now().date_naive().and_time(NaiveTime::MIN).and_utc();
    assert_eq!(
        day_window(&app.db, &key.id, day).await,
        (ok, ok),
        "(granted, used) of the key's day window"
    );
    let account = format!("acct:{}", owner.user_id);
    assert_eq!(
        day_window(&app.db, &account, day).await,
        (ok, ok),
        "(granted, used) of the account's day window"
    );
    assert_eq!(
        logged_calls(&app.db, &key.id).await,
        (ok, ok),
        "(rows, rows with code 0) of the call log"
    );
}
