//! Webhooks under load (D22): one import publishing every index to 1,000 subscribed
//! endpoints, against the same import with no subscriptions, in one run.
//!
//! `cargo bench --bench webhooks` starts two instances of the service in this process,
//! each on its own fresh database with every weekday of November 2026 open (the test
//! harness's settings: one HTTP worker, a pool of 4; the test clock at 2026-11-20). On
//! one, ten pro members (the pro tier's `max_webhooks` raised to 100 through the
//! super administrator's API) register 100 endpoints each, 1,000 in all, each a path on
//! one loopback receiver in this process that answers 204. Then, round by round, each
//! instance imports one new trading day of all seven indexes with quotes, 100
//! specifications each (`BENCH_SPECS`; the composite follows), the order alternating, each import
//! started once the last round's deliveries are all recorded; on the subscribed one the
//! bench waits until every delivery has arrived (8 events to each of the 1,000
//! endpoints: 8,000 messages).
//!
//! It prints the import's own time on each (median of the rounds, as
//! `iq_import_duration_seconds` measures it: reading, validating, writing, committing
//! and telling the local caches) and their ratio (the goal: within 5%: delivery happens
//! after the commit and must not slow the import), the same for the whole HTTP request,
//! and the time from the import's answer to the last delivery of each round (the goal:
//! within 10 s).
//!
//! Then `BENCH_SILENT_ROUNDS` more rounds (default 2) in which the first member's 100
//! endpoints never answer (D27: the receiver takes each message and holds it; the
//! service gives up after 15 s): every delivery to the other endpoints must still arrive
//! within 10 s of the import's answer, and the import's own time stay within 5% of the
//! plain instance's. Nothing is asserted: the machine is shared, so the numbers are
//! read, not enforced.
//!
//! Settings: `BENCH_ROUNDS` (default 5), `BENCH_SILENT_ROUNDS` (default 2; together at
//! most 14), `BENCH_ENDPOINTS` (default 1000, a multiple of 100, at least 200 for the
//! silent rounds), `BENCH_SPECS` (specifications per index: 10, 20, 25, 50 or 100,
//! default 100).

use iq_test_support as helpers;

#[path = "support.rs"]
mod support;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::json;
use support::{median, setting};

use helpers::quotes::{csv, import, BASES, NOVEMBER};
use helpers::{spawn_with_sql, TestApp};

/// Every index with quotes: the six bases of the composite and the rental index.
fn indexes() -> Vec<&'static str> {
    let mut codes = BASES.to_vec();
    codes.push("Server_Rental_Index");
    codes
}

/// Events one day's import tells a pro member: each index with quotes, and the composite.
const EVENTS_PER_IMPORT: usize = BASES.len() + 2;

/// The weekdays of November 2026 up to the test clock's today, the 20th.
fn weekdays() -> Vec<String> {
    (2..=20)
        .filter_map(|d| chrono::NaiveDate::from_ymd_opt(2026, 11, d))
        .filter(|d| chrono::Datelike::weekday(d).num_days_from_monday() < 5)
        .map(|d| d.format("%Y%m%d").to_string())
        .collect()
}

/// One day's quotes of every index, `specs` specifications each (weights equal, summing
/// to 1): a day's workbook; `round` moves the prices, so each day is new.
fn rows(day: &str, round: usize, specs: usize) -> Vec<(String, String, String, String, String)> {
    let weight = format!("{:.4}", 1.0 / specs as f64);
    let mut rows = Vec::new();
    for (i, code) in indexes().into_iter().enumerate() {
        for spec in 0..specs {
            let price = 1000 * (i + 1) + 10 * spec + 7 * round;
            rows.push((
                day.to_string(),
                code.to_string(),
                format!("spec {spec}"),
                weight.clone(),
                price.to_string(),
            ));
        }
    }
    rows
}

/// What the receiver counts, and whether the first member's endpoints are silent.
#[derive(Default)]
struct Counts {
    /// Messages answered (every path but the silent ones').
    answered: AtomicUsize,
    /// Messages taken and never answered.
    held: AtomicUsize,
    silent: AtomicBool,
}

/// The path prefix of the endpoints that go silent: the first member's.
const SILENT_PREFIX: &str = "/hook/0/";

/// Counts every message that arrives, on any path; once `silent` is set, holds those
/// to [`SILENT_PREFIX`] without answering.
fn start_receiver(counts: Arc<Counts>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
    let port = listener.local_addr().unwrap().port();
    let data = web::Data::from(counts);
    let server = HttpServer::new(move || {
        App::new().app_data(data.clone()).default_service(web::to(
            |request: HttpRequest, counts: web::Data<Counts>| async move {
                if counts.silent.load(Ordering::Relaxed)
                    && request.path().starts_with(SILENT_PREFIX)
                {
                    counts.held.fetch_add(1, Ordering::Relaxed);
                    actix_web::rt::time::sleep(Duration::from_secs(600)).await;
                } else {
                    counts.answered.fetch_add(1, Ordering::Relaxed);
                }
                HttpResponse::NoContent().finish()
            },
        ))
    })
    .workers(2)
    .listen(listener)
    .expect("listen")
    .run();
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}

async fn instance() -> TestApp {
    spawn_with_sql(NOVEMBER).await
}

/// The import of `file` on `app`: its own time (the `iq_import_duration_seconds` it
/// adds: from reading the file to its commit and the local caches told) and the HTTP
/// request's, upload to answer. The registry is the process's, shared by both instances,
/// so imports are timed one at a time.
async fn timed_import(
    app: &TestApp,
    admin: &helpers::Session,
    file: Vec<u8>,
) -> (Duration, Duration) {
    let before = import_seconds(app).await;
    let started = Instant::now();
    let reply = app.import_file(admin, "day.csv", file).await;
    let took = started.elapsed();
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let own = import_seconds(app).await - before;
    (Duration::from_secs_f64(own.max(0.0)), took)
}

/// The sum of accepted imports' durations so far, from `/metrics`.
async fn import_seconds(app: &TestApp) -> f64 {
    let text = app
        .request(reqwest::Method::GET, "/metrics")
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    text.lines()
        .find(|l| l.starts_with("iq_import_duration_seconds_sum{result=\"accepted\"}"))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0.0)
}

#[actix_web::main]
async fn main() {
    let rounds = setting("BENCH_ROUNDS", 5) as usize;
    let endpoints = (setting("BENCH_ENDPOINTS", 1000) as usize / 100).max(1) * 100;
    let silent_rounds = if endpoints >= 200 {
        setting("BENCH_SILENT_ROUNDS", 2) as usize
    } else {
        0
    };
    // 100, 50, 25, 20 or 10: weights that sum to 1 in four decimals.
    let specs = match setting("BENCH_SPECS", 100) {
        n @ (10 | 20 | 25 | 50 | 100) => n as usize,
        _ => 100,
    };
    let days = weekdays();
    assert!(
        rounds + silent_rounds < days.len(),
        "at most {} rounds in all",
        days.len() - 1
    );

    let plain = instance().await;
    let subscribed = instance().await;
    let plain_admin = plain.admin().await;
    let admin = subscribed.admin().await;
    let mut pro = subscribed.tier(&admin, "pro").await;
    pro.as_object_mut().unwrap().remove("tier");
    pro["max_webhooks"] = json!(100);
    let raised = subscribed.put_tier(&admin, "pro", pro).await;
    assert_eq!(raised.code(), 0, "{}", raised.body);

    let counts = Arc::new(Counts::default());
    let arrived = &counts.answered;
    let receiver = start_receiver(counts.clone());
    let started = Instant::now();
    for member in 0..endpoints / 100 {
        let session = subscribed.member(&format!("member{member}"), "pro").await;
        for n in 0..100 {
            subscribed
                .new_webhook(
                    &session,
                    &format!("{receiver}/hook/{member}/{n}"),
                    &["index.published", "index.revised"],
                )
                .await;
        }
    }
    println!(
        "webhooks bench: {endpoints} endpoints registered in {:.1} s; {rounds} rounds of one \
         day of {} indexes ({} events to each endpoint)",
        started.elapsed().as_secs_f64(),
        indexes().len(),
        EVENTS_PER_IMPORT
    );

    // The first day sets each index's base: not timed.
    import(&plain, &plain_admin, "first.csv", &rows(&days[0], 0, specs)).await;
    import(&subscribed, &admin, "first.csv", &rows(&days[0], 0, specs)).await;
    let mut expected = endpoints * EVENTS_PER_IMPORT;
    wait_for(arrived, expected, Duration::from_secs(120)).await;

    let (mut without, mut with, mut delivered) = (Vec::new(), Vec::new(), Vec::new());
    let (mut without_http, mut with_http) = (Vec::new(), Vec::new());
    // The silent rounds' figures, apart.
    let (mut silent_without, mut silent_with, mut silent_delivered) =
        (Vec::new(), Vec::new(), Vec::new());
    for (round, day) in days.iter().enumerate().skip(1).take(rounds + silent_rounds) {
        let silent = round > rounds;
        if silent && !counts.silent.swap(true, Ordering::Relaxed) {
            println!(
                "rounds {}-{}: the first member's 100 endpoints never answer",
                round,
                rounds + silent_rounds
            );
        }
        let answering = if silent { endpoints - 100 } else { endpoints };
        let file = csv(&rows(day, round, specs));
        // Each import starts on a quiet machine: the last round's deliveries recorded.
        let first_plain = round % 2 == 0;
        let (own_plain, own_subscribed, all_in) = if silent {
            (&mut silent_without, &mut silent_with, &mut silent_delivered)
        } else {
            (&mut without, &mut with, &mut delivered)
        };
        if first_plain {
            quiet(&subscribed).await;
            let (own, http) = timed_import(&plain, &plain_admin, file.clone()).await;
            own_plain.push(own);
            if !silent {
                without_http.push(http);
            }
        }
        quiet(&subscribed).await;
        let (own, http) = timed_import(&subscribed, &admin, file.clone()).await;
        own_subscribed.push(own);
        if !silent {
            with_http.push(http);
        }
        let answered = Instant::now();
        expected += answering * EVENTS_PER_IMPORT;
        let arrived_at = wait_for(arrived, expected, Duration::from_secs(120)).await;
        all_in.push(arrived_at.saturating_duration_since(answered));
        if !first_plain {
            quiet(&subscribed).await;
            let (own, http) = timed_import(&plain, &plain_admin, file).await;
            own_plain.push(own);
            if !silent {
                without_http.push(http);
            }
        }
    }
    let secs = |d: &[Duration]| median(&d.iter().map(Duration::as_secs_f64).collect::<Vec<_>>());
    let (plain_s, subscribed_s) = (secs(&without), secs(&with));
    let slowest = delivered.iter().max().copied().unwrap_or_default();
    let (plain_http, subscribed_http) = (secs(&without_http), secs(&with_http));
    let ratio = subscribed_s / plain_s;
    let verdict = if ratio <= 1.05 {
        "PASS: within 5%"
    } else {
        "ABOVE GOAL"
    };
    println!("import's own time, no subscriptions: median {plain_s:.4} s");
    println!("import's own time, {endpoints} endpoints: median {subscribed_s:.4} s");
    println!("ratio subscribed / plain: {ratio:.3} ({verdict})");
    let ms = |d: &[Duration]| {
        d.iter()
            .map(|d| format!("{:.1}", d.as_secs_f64() * 1000.0))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "  rounds (ms), plain: {}; subscribed: {}",
        ms(&without),
        ms(&with)
    );
    println!(
        "the HTTP request, upload to answer: median {subscribed_http:.4} s / {plain_http:.4} s \
         = {:.3}",
        subscribed_http / plain_http
    );
    println!(
        "all {} deliveries after the import's answer: median {:.2} s, slowest {:.2} s ({})",
        endpoints * EVENTS_PER_IMPORT,
        secs(&delivered),
        slowest.as_secs_f64(),
        if slowest <= Duration::from_secs(10) {
            "PASS: within 10 s"
        } else {
            "ABOVE GOAL"
        }
    );
    if silent_rounds > 0 {
        let (plain_s, subscribed_s) = (secs(&silent_without), secs(&silent_with));
        let ratio = subscribed_s / plain_s;
        let slowest = silent_delivered.iter().max().copied().unwrap_or_default();
        println!(
            "with 100 silent endpoints ({silent_rounds} rounds, {} messages held unanswered):",
            counts.held.load(Ordering::Relaxed)
        );
        println!(
            "  import's own time: median {subscribed_s:.4} s against {plain_s:.4} s plain, \
             ratio {ratio:.3} ({})",
            if ratio <= 1.05 {
                "PASS: within 5%"
            } else {
                "ABOVE GOAL"
            }
        );
        println!(
            "  all {} deliveries to the answering endpoints after the import's answer: \
             median {:.2} s, slowest {:.2} s ({})",
            (endpoints - 100) * EVENTS_PER_IMPORT,
            secs(&silent_delivered),
            slowest.as_secs_f64(),
            if slowest <= Duration::from_secs(10) {
                "PASS: within 10 s"
            } else {
                "ABOVE GOAL"
            }
        );
    }
}

/// Waits until `app` has no delivery waiting for a first attempt or in flight (every
/// attempt made and recorded; a silent endpoint's failed ones wait for a retry that the
/// test clock, which stands still, never brings) and no autovacuum runs on the server
/// (the deliveries' writes wake it), then checkpoints: each import is timed on a
/// machine doing nothing else, as the other instance's is.
async fn quiet(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let row = app
            .db
            .query_one(
                "SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending' \
                         AND (attempts = 0 OR locked_until IS NOT NULL)) \
                      + (SELECT count(*) FROM pg_stat_activity \
                         WHERE backend_type = 'autovacuum worker')",
                &[],
            )
            .await
            .expect("count pending deliveries");
        if row.get::<_, i64>(0) == 0 {
            // The deliveries' writes flushed too, so no background write of theirs
            // overlaps the next timed import (on this two-core machine the database,
            // the receivers and the service share the cores).
            app.db
                .batch_execute("CHECKPOINT")
                .await
                .expect("checkpoint");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "deliveries still pending after 2 min"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `count` reaches `expected`; when it did.
async fn wait_for(count: &AtomicUsize, expected: usize, within: Duration) -> Instant {
    let deadline = Instant::now() + within;
    loop {
        let seen = count.load(Ordering::Relaxed);
        if seen >= expected {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{seen} of {expected} deliveries arrived within {within:?}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(5)).await;
    }
}
