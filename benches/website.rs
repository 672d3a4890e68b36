//! The website's throughput against the API's, in one run: the home page and an index
//! page as a visitor sees them (served from the visitor page cache once warm) against
//! the cached `index_daily` query with a professional member's key, on one instance
//! (the test harness's settings: one HTTP worker) with the fixture data.
//!
//! `cargo bench --bench website` runs alternating timed rounds (the order rotates
//! every round) and prints requests per second of each (median of the rounds) and the
//! ratios to the key query. The goal is a home page at least half as fast as the key
//! query; the bench prints `PASS` or `BELOW GOAL` and asserts nothing (the machine is
//! shared and noisy: only ratios within one run mean anything).
//!
//! Settings: `BENCH_SECS` per round (default 3), `BENCH_ROUNDS` (default 3),
//! `BENCH_CLIENTS` concurrent connections (default 16).

use iq_test_support as helpers;

#[path = "load_runtime.rs"]
mod load_runtime;
#[path = "support.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{median, setting, RAISED};

#[derive(Clone)]
enum Call {
    Page(String),
    Query { url: String, key: String },
}

impl Call {
    /// One call; whether it was answered as it should be.
    async fn send(&self, http: &reqwest::Client) -> bool {
        let sent = match self {
            Call::Page(url) => http.get(url).send().await,
            Call::Query { url, key } => {
                let body =
                    json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}});
                http.post(url)
                    .header("X-API-Key", key)
                    .json(&body)
                    .send()
                    .await
            }
        };
        match sent {
            Ok(response) => response.status() == 200 && response.bytes().await.is_ok(),
            Err(_) => false,
        }
    }
}

#[actix_web::main]
async fn main() {
    let secs = setting("BENCH_SECS", 3);
    let rounds = setting("BENCH_ROUNDS", 3);
    let clients = setting("BENCH_CLIENTS", 16);
    // The rounds measure the pages, not the keyless protection.
    let app = helpers::spawn_with(
        helpers::Spawn::sql(helpers::FIXTURE).tuned(|s| s.site.website_per_minute = 0),
    )
    .await;
    let admin = app.admin().await;
    let mut pro = app.tier(&admin, "pro").await;
    pro["per_minute"] = json!(RAISED);
    pro["per_day"] = json!(RAISED);
    pro.as_object_mut().unwrap().remove("tier");
    assert_eq!(app.put_tier(&admin, "pro", pro).await.code(), 0);
    let key = app.key_of_tier(&admin, "bench", "pro").await;
    let variants = [
        (
            "key query",
            Call::Query {
                url: format!("{}/api/v1/query", app.address),
                key: key.key.clone(),
            },
        ),
        ("home page", Call::Page(format!("{}/", app.address))),
        (
            "index page",
            Call::Page(format!("{}/indexes/Server_Index", app.address)),
        ),
    ];
    // The load runs on its own thread so it does not share the service's event loop.
    let load = std::thread::spawn(move || {
        let runtime = load_runtime::build();
        runtime.block_on(rounds_of(&variants, secs, rounds, clients))
    });
    actix_web::rt::task::spawn_blocking(move || load.join())
        .await
        .expect("join")
        .expect("load thread");
    drop(app);
}

async fn rounds_of(variants: &[(&str, Call)], secs: u64, rounds: u64, clients: u64) {
    let http = helpers::http_client();
    for (name, call) in variants {
        assert!(call.send(&http).await, "{name}: the warm-up call failed");
    }
    let mut rates = vec![Vec::new(); variants.len()];
    for round in 0..rounds as usize {
        for i in (0..variants.len()).map(|i| (i + round) % variants.len()) {
            rates[i].push(flat_out(&http, &variants[i].1, secs, clients).await);
        }
        let line: String = variants
            .iter()
            .zip(&rates)
            .map(|((name, _), r)| format!("   {name} {:>7.0} req/s", r[round]))
            .collect();
        println!("round {}:{line}", round + 1);
    }
    let medians: Vec<f64> = rates.iter().map(|r| median(r)).collect();
    println!("{clients} clients, median of {rounds} x {secs}s rounds:");
    for ((name, _), rate) in variants.iter().zip(&medians) {
        println!(
            "  {name:<11} {rate:>8.0} req/s   / key query = {:.3}",
            rate / medians[0]
        );
    }
    let goal = medians[1] / medians[0] >= 0.5;
    println!(
        "home page / key query >= 0.5: {}",
        if goal { "PASS" } else { "BELOW GOAL" }
    );
}

/// Requests per second answered correctly by `clients` connections for `secs`; a
/// wrong answer fails the bench.
async fn flat_out(http: &reqwest::Client, call: &Call, secs: u64, clients: u64) -> f64 {
    let ok = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (http, call, ok) = (http.clone(), call.clone(), ok.clone());
            tokio::spawn(async move {
                while started.elapsed() < Duration::from_secs(secs) {
                    assert!(call.send(&http).await, "a call failed during the round");
                    ok.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("client task");
    }
    ok.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}
