//! Webhooks under load (D22): one import publishing every index to 1,000 subscribed
//! endpoints, against the same import with no subscriptions, in one run.
//!
//! `cargo bench --bench webhooks` starts two instances of the service in this process,
//! each on its own fresh database with every weekday of November 2026 open (the test
//! harness's settings: one HTTP worker, a pool of 4; the test clock at 2026-11-20). On
//! one, ten pro members (the pro tier's `max_webhooks` raised to 100 through the
//! super administrator's API) register 100 endpoints each, 1,000 in all, each a path on
//! one loopback receiver in this process that answers 204. Then, round by round, each
//! instance imports one new trading day of all seven base indexes (the composite
//! follows), the order alternating; on the subscribed one the bench waits until every
//! delivery has arrived (8 events to each of the 1,000 endpoints: 8,000 messages).
//!
//! It prints the import's time on each (median of the rounds, the HTTP request from
//! upload to answer) and their ratio (the goal: within 5%: delivery happens after the
//! commit and must not slow the import), and the time from the import's answer to the
//! last delivery of each round (the goal: within 10 s). Nothing is asserted: the
//! machine is shared, so the numbers are read, not enforced.
//!
//! Settings: `BENCH_ROUNDS` (default 5), `BENCH_ENDPOINTS` (default 1000, a multiple of
//! 100).

use iq_test_support as helpers;

#[path = "support.rs"]
mod support;

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::json;
use support::{median, setting};

use helpers::quotes::{csv, import, NOVEMBER};
use helpers::{spawn_with, Spawn, TestApp};

/// Every index with quotes: the six bases of the composite and the rental index.
const INDEXES: [&str; 7] = [
    "Server_Index",
    "Server_Rental_Index",
    "GPU_Index",
    "DRAM_Index",
    "SSD_Index",
    "CPU_Index",
    "OI_Index",
];
/// Events one day's import tells a pro member: each index with quotes, and the composite.
const EVENTS_PER_IMPORT: usize = INDEXES.len() + 1;

/// The weekdays of November 2026 up to the test clock's today, the 20th.
fn weekdays() -> Vec<String> {
    (2..=20)
        .filter_map(|d| chrono::NaiveDate::from_ymd_opt(2026, 11, d))
        .filter(|d| chrono::Datelike::weekday(d).num_days_from_monday() < 5)
        .map(|d| d.format("%Y%m%d").to_string())
        .collect()
}

/// One day's quotes of every index; `round` moves the prices, so each day is new.
fn rows(day: &str, round: usize) -> Vec<(String, String, String, String, String)> {
    INDEXES
        .iter()
        .enumerate()
        .map(|(i, code)| {
            let price = 1000 * (i + 1) + 7 * round;
            (
                day.to_string(),
                code.to_string(),
                "unit".into(),
                "1".into(),
                price.to_string(),
            )
        })
        .collect()
}

/// Counts every message that arrives, on any path.
fn start_receiver(count: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
    let port = listener.local_addr().unwrap().port();
    let data = web::Data::from(count);
    let server = HttpServer::new(move || {
        App::new().app_data(data.clone()).default_service(web::to(
            |count: web::Data<AtomicUsize>| async move {
                count.fetch_add(1, Ordering::Relaxed);
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
    spawn_with(Spawn {
        setup_sql: NOVEMBER,
        ..Spawn::default()
    })
    .await
}

/// The import of `file` on `app`, timed from upload to answer.
async fn timed_import(app: &TestApp, admin: &helpers::Session, file: Vec<u8>) -> Duration {
    let started = Instant::now();
    let reply = app.import_file(admin, "day.csv", file).await;
    let took = started.elapsed();
    assert_eq!(reply.code(), 0, "{}", reply.body);
    took
}

#[actix_web::main]
async fn main() {
    let rounds = setting("BENCH_ROUNDS", 5) as usize;
    let endpoints = (setting("BENCH_ENDPOINTS", 1000) as usize / 100).max(1) * 100;
    let days = weekdays();
    assert!(rounds < days.len(), "at most {} rounds", days.len() - 1);

    let plain = instance().await;
    let subscribed = instance().await;
    let plain_admin = plain.admin().await;
    let admin = subscribed.admin().await;
    let mut pro = subscribed.tier(&admin, "pro").await;
    pro.as_object_mut().unwrap().remove("tier");
    pro["max_webhooks"] = json!(100);
    let raised = subscribed.put_tier(&admin, "pro", pro).await;
    assert_eq!(raised.code(), 0, "{}", raised.body);

    let arrived = Arc::new(AtomicUsize::new(0));
    let receiver = start_receiver(arrived.clone());
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
        INDEXES.len(),
        EVENTS_PER_IMPORT
    );

    // The first day sets each index's base: not timed.
    import(&plain, &plain_admin, "first.csv", &rows(&days[0], 0)).await;
    import(&subscribed, &admin, "first.csv", &rows(&days[0], 0)).await;
    let mut expected = endpoints * EVENTS_PER_IMPORT;
    wait_for(&arrived, expected, Duration::from_secs(120)).await;

    let (mut without, mut with, mut delivered) = (Vec::new(), Vec::new(), Vec::new());
    for (round, day) in days.iter().enumerate().skip(1).take(rounds) {
        let file = csv(&rows(day, round));
        let first_plain = round % 2 == 0;
        if first_plain {
            without.push(timed_import(&plain, &plain_admin, file.clone()).await);
        }
        with.push(timed_import(&subscribed, &admin, file.clone()).await);
        let answered = Instant::now();
        expected += endpoints * EVENTS_PER_IMPORT;
        let all_in = wait_for(&arrived, expected, Duration::from_secs(120)).await;
        delivered.push(all_in.saturating_duration_since(answered));
        if !first_plain {
            without.push(timed_import(&plain, &plain_admin, file).await);
        }
    }
    let secs = |d: &[Duration]| median(&d.iter().map(Duration::as_secs_f64).collect::<Vec<_>>());
    let (plain_s, subscribed_s) = (secs(&without), secs(&with));
    let slowest = delivered.iter().max().copied().unwrap_or_default();
    println!("import, no subscriptions:       median {:.3} s", plain_s);
    println!(
        "import, {endpoints} subscriptions:   median {:.3} s",
        subscribed_s
    );
    println!(
        "ratio subscribed / plain:        {:.3} ({})",
        subscribed_s / plain_s,
        if subscribed_s / plain_s <= 1.05 {
            "PASS: within 5%"
        } else {
            "ABOVE GOAL"
        }
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
