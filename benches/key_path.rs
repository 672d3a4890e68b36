//! Throughput of the key-authenticated hot path against the visitor's, in one run.
//!
//! `cargo bench --bench key_path` spawns the service on a fresh database (the test
//! harness's `spawn_with_fixture`), creates a professional member's key, warms the
//! caches, then alternates timed rounds of the same cached `index_daily` query as a
//! visitor and with the key. It reports requests per second of each and their ratio;
//! the machine is shared and noisy, so only the ratio within one run means anything.
//! That a cached key costs no database round trip is asserted by the API test
//! `keys::a_cached_key_is_verified_without_the_database`.
//!
//! Settings: `BENCH_SECS` per round (default 3), `BENCH_ROUNDS` (default 3),
//! `BENCH_CLIENTS` concurrent connections (default 16).

#[path = "../tests/api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[actix_web::main]
async fn main() {
    let secs = setting("BENCH_SECS", 3);
    let rounds = setting("BENCH_ROUNDS", 3);
    let clients = setting("BENCH_CLIENTS", 16);
    let app = helpers::spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "bench", "pro").await;
    let url = format!("{}/api/v1/query", app.address);
    let body = json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}});

    // The load runs on its own threads so it does not share the actors' event loop.
    let load = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("load runtime");
        runtime.block_on(async {
            let http = reqwest::Client::new();
            for k in [None, Some(key.key.as_str())] {
                let warm = send(&http, &url, &body, k).await;
                assert_eq!(warm["code"], 0, "warm-up failed: {warm}");
            }
            let mut visitor = Vec::new();
            let mut keyed = Vec::new();
            for round in 1..=rounds {
                let v = run(&http, &url, &body, None, secs, clients).await;
                let k = run(&http, &url, &body, Some(&key.key), secs, clients).await;
                println!("round {round}: visitor {v:>8.0} req/s   key {k:>8.0} req/s");
                visitor.push(v);
                keyed.push(k);
            }
            (median(visitor), median(keyed))
        })
    });
    let (visitor, keyed) = actix_web::rt::task::spawn_blocking(move || load.join())
        .await
        .expect("join")
        .expect("load thread");
    println!(
        "cached index_daily, {clients} clients, median of {rounds} x {secs}s rounds:\n  \
         visitor {visitor:.0} req/s\n  key     {keyed:.0} req/s\n  key / visitor = {:.3}",
        keyed / visitor
    );
}

async fn send(http: &reqwest::Client, url: &str, body: &Value, key: Option<&str>) -> Value {
    let mut request = http.post(url).json(body);
    if let Some(key) = key {
        request = request.header("X-API-Key", key);
    }
    request
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json")
}

/// Requests per second answered with code 0 by `clients` connections for `secs`.
async fn run(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    key: Option<&str>,
    secs: u64,
    clients: u64,
) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (http, url, body, done) =
                (http.clone(), url.to_string(), body.clone(), done.clone());
            let key = key.map(str::to_string);
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    let reply = send(&http, &url, &body, key.as_deref()).await;
                    assert_eq!(reply["code"], 0, "{reply}");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("client task");
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
