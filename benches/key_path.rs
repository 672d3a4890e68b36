//! The key-authenticated hot path: what the quota (step 7) costs the database, and its
//! throughput with and without the quota against the visitor's, in one run.
//!
//! `cargo bench --bench key_path` starts three instances of the service in this process,
//! each on its own fresh database with the test harness's fixture data, its settings
//! (`helpers::test_settings`: one HTTP worker, a pool of 4) and the production quota
//! settings (`QuotaSettings::default()`: a flush every second, leases given back after
//! 10 s without calls). The test clock stands still at 2026-11-20 04:00:00 UTC, so every
//! call falls in one quota minute and one quota day. Then it measures, in this order:
//!
//! 1. **Database statements per 1000 admitted calls at a professional member's rate.**
//!    A pro key with the pro tier's default limits (10000 a minute, 10000 a day) is
//!    driven at its per-minute rate (10000 / 60 = 167 calls/s, paced, up to 8 calls in
//!    flight) for `BENCH_QUOTA_CALLS` calls, all of the same cached `index_daily` query.
//!    Only a visitor's call warms the page cache beforehand, so the key's first lease is
//!    counted. The count is the quota's own (`ShowStats`: every lease, flush and prune
//!    statement it issued), taken from just before the first call (after the day's
//!    prune, which runs once a day) to when it has been quiet for longer than one flush
//!    interval after the last call, so the final flush is in. The goal is at most 20;
//!    the bench prints `PASS` or `ABOVE GOAL` and does not fail. It also prints the
//!    split (leases from `ShowStats`, flushes from the `quota_flushes` rows), the
//!    call-log rows written (which must equal the calls admitted), and the one more
//!    statement that gives the key's unspent leases back once it has been idle for 10 s.
//! 2. **Throughput with and without the quota.** Two more instances, one with step 7
//!    and one without it (`runtime.quota_enforced = false`, which exists only for this), each with
//!    its own pro key. The pro tier's limits are raised on both databases to 1000000000
//!    a minute and a day through the super administrator's `PUT /api/v1/admin/tiers/pro`
//!    (ordinary configuration), so the quota still runs its full course on every call,
//!    leases and flushes included, but never refuses during the rounds. Timed rounds of
//!    the cached query as a visitor, with the key without the quota and with the key with
//!    the quota alternate (the order rotates every round); the bench prints requests per
//!    second of each (median of the rounds) and the ratios. The machine is shared and
//!    noisy, so only ratios within one run mean anything, and none is asserted. That a
//!    cached key costs no database round trip is asserted by the API test
//!    `keys::a_cached_key_is_verified_without_the_database`.
//!
//! Only answers with code 0 count as done; a quota refusal (42901/42902) is counted
//! apart and fails the throughput rounds, and any other error fails the bench.
//!
//! Settings: `BENCH_SECS` per round (default 3), `BENCH_ROUNDS` (default 3),
//! `BENCH_CLIENTS` concurrent connections in the rounds (default 16),
//! `BENCH_QUOTA_CALLS` calls for the statement count (default 3000; 0 skips it; more
//! than the pro tier's day, 10000, are refused and reported as such).

use iq_test_support as helpers;

#[path = "load_runtime.rs"]
mod load_runtime;
#[path = "support.rs"]
mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{median, setting, RAISED};

use iq_actors::quota::{QuotaSettings, QuotaShards, QuotaStats};
use serde_json::{json, Value};
use tokio_postgres::NoTls;

use helpers::{Key, TestApp};

/// The goal of the issue: database statements per 1000 admitted calls.
const GOAL_PER_1000: f64 = 20.0;
/// Calls in flight at most while pacing.
const PACED_CLIENTS: u64 = 8;

/// An instance of the service and a professional member's key on it.
struct Keyed {
    app: TestApp,
    key: Key,
    url: String,
}

/// A statement count of one instance, taken by the load thread.
struct Probe {
    quota: QuotaShards,
    database_url: String,
}

#[actix_web::main]
async fn main() {
    let secs = setting("BENCH_SECS", 3);
    let rounds = setting("BENCH_ROUNDS", 3);
    let clients = setting("BENCH_CLIENTS", 16);
    let quota_calls = setting("BENCH_QUOTA_CALLS", 3000);
    let body = json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}});

    let paced = match quota_calls {
        0 => None,
        _ => Some(keyed(true, None).await),
    };
    let per_minute = match &paced {
        Some(paced) => pro_per_minute(paced).await,
        None => 0,
    };
    let plain = keyed(false, Some(RAISED)).await;
    let enforced = keyed(true, Some(RAISED)).await;
    // The raised limits are the ones the quota applies (this call also warms up).
    let reply = enforced
        .app
        .query_with(body.clone(), Some(&enforced.key.key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(
        reply.rate_limit(),
        RAISED,
        "the raised pro tier limits did not take"
    );

    // `paced` itself stays alive to the end: its TestApp owns the database.
    let paced_calls = paced.as_ref().map(|paced| {
        let probe = probe(&paced.app);
        (paced.url.clone(), paced.key.key.clone(), probe)
    });
    let enforced_probe = probe(&enforced.app);
    let variants = [
        ("visitor", enforced.url.clone(), None),
        (
            "key, no quota",
            plain.url.clone(),
            Some(plain.key.key.clone()),
        ),
        (
            "key + quota",
            enforced.url.clone(),
            Some(enforced.key.key.clone()),
        ),
    ];

    // The load runs on its own threads so it does not share the actors' event loop.
    let load = std::thread::spawn(move || {
        let runtime = load_runtime::build();
        runtime.block_on(async {
            let http = helpers::http_client();
            if let Some((url, key, probe)) = paced_calls {
                let rate = per_minute as f64 / 60.0;
                statements(&http, &url, &body, &key, &probe, rate, quota_calls).await;
            }
            throughput(
                &http,
                &variants,
                &body,
                &enforced_probe,
                secs,
                rounds,
                clients,
            )
            .await;
        })
    });
    actix_web::rt::task::spawn_blocking(move || load.join())
        .await
        .expect("join")
        .expect("load thread");
}

/// Part 1: statements per 1000 admitted calls of a pro key driven at its per-minute rate.
async fn statements(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    key: &str,
    probe: &Probe,
    rate: f64,
    calls: u64,
) {
    let flush = QuotaSettings::default().flush_interval;
    let idle_release = QuotaSettings::default().idle_release;
    // Warm the page cache as a visitor: the quota sees nothing of it.
    let warm = send(http, url, body, None).await;
    assert_eq!(warm["code"], 0, "warm-up failed: {warm}");
    // The day's prune comes with the quota actor's first tick; wait for it, so the count
    // below holds only what the calls cause.
    let waited = Instant::now();
    while probe.stats().await.statements == 0 {
        assert!(
            waited.elapsed() < 5 * flush,
            "no prune statement after 5 ticks"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = probe.stats().await;
    let flushes_before = probe.count("quota_flushes").await;
    let calls_before = probe.count("call_log").await;

    let tally = run(
        http,
        url,
        body,
        Some(key),
        Pace::Rate {
            per_sec: rate,
            calls,
        },
        PACED_CLIENTS,
    )
    .await;
    let last_call = Instant::now();
    // The final flush comes with the next tick: wait until nothing moved for longer than
    // one flush interval.
    let after = probe.settled(flush + Duration::from_millis(500)).await;
    let flushes = probe.count("quota_flushes").await - flushes_before;
    let logged = probe.count("call_log").await - calls_before;
    // Then the key goes idle and gives back what it holds.
    tokio::time::sleep(
        (last_call + idle_release + flush).saturating_duration_since(Instant::now()),
    )
    .await;
    let idle = probe.settled(flush + Duration::from_millis(500)).await;

    let statements = after.statements - before.statements;
    let leases = after.leases - before.leases;
    let admitted = tally.ok;
    let per_1000 = |statements: u64| statements as f64 * 1000.0 / admitted.max(1) as f64;
    let verdict = |per_1000: f64| {
        if per_1000 <= GOAL_PER_1000 {
            "PASS"
        } else {
            "ABOVE GOAL"
        }
    };
    let with_give_back = idle.statements - before.statements;
    println!(
        "quota statements at a professional member's rate ({rate:.1} calls/s, up to \
         {PACED_CLIENTS} in flight, flush every {flush:?}):\n  \
         {admitted} calls admitted (code 0) in {:.1} s = {:.1} calls/s, {} refused\n  \
         {statements} statements: {leases} leases, {flushes} flushes, {} other\n  \
         statements per 1000 admitted calls = {:.2}   (goal <= {GOAL_PER_1000}: {})\n  \
         + {} statement(s) giving the idle key's leases back after {idle_release:?}: \
         {:.2} per 1000 ({})",
        tally.secs,
        admitted as f64 / tally.secs,
        tally.refused,
        statements.saturating_sub(leases + flushes),
        per_1000(statements),
        verdict(per_1000(statements)),
        idle.statements - after.statements,
        per_1000(with_give_back),
        verdict(per_1000(with_give_back)),
    );
    let counted = after.admitted - before.admitted;
    if counted != admitted || logged != admitted {
        println!(
            "  MISMATCH: the quota counted {counted} admitted and the call log holds \
             {logged} rows for {admitted} answers with code 0"
        );
    } else {
        println!("  the quota's admitted count and the call log rows agree ({logged})");
    }
}

/// Part 2: throughput of the visitor and of a key without and with the quota.
async fn throughput(
    http: &reqwest::Client,
    variants: &[(&str, String, Option<String>)],
    body: &Value,
    enforced: &Probe,
    secs: u64,
    rounds: u64,
    clients: u64,
) {
    for (name, url, key) in variants {
        let warm = send(http, url, body, key.as_deref()).await;
        assert_eq!(warm["code"], 0, "{name} warm-up failed: {warm}");
    }
    let before = enforced.stats().await;
    let mut rates = vec![Vec::new(); variants.len()];
    for round in 0..rounds as usize {
        // Each round starts with the next variant, so none always runs first.
        for i in (0..variants.len()).map(|i| (i + round) % variants.len()) {
            let (name, url, key) = &variants[i];
            let pace = Pace::FlatOut { secs };
            let tally = run(http, url, body, key.as_deref(), pace, clients).await;
            assert_eq!(tally.refused, 0, "{name}: refused over the raised limits");
            rates[i].push(tally.ok as f64 / tally.secs);
        }
        let line: String = variants
            .iter()
            .zip(&rates)
            .map(|((name, _, _), rates)| format!("   {name} {:>7.0} req/s", rates[round]))
            .collect();
        println!(
            "round {} (from {}):{line}",
            round + 1,
            variants[round % variants.len()].0
        );
    }
    let after = enforced.stats().await;
    let [visitor, plain, quota] = [0, 1, 2].map(|i| median(&rates[i]));
    println!(
        "cached index_daily, {clients} clients, median of {rounds} x {secs}s rounds:\n  \
         visitor        {visitor:>8.0} req/s\n  \
         key, no quota  {plain:>8.0} req/s\n  \
         key + quota    {quota:>8.0} req/s\n  \
         key + quota / key, no quota = {:.3}\n  \
         key + quota / visitor       = {:.3}\n  \
         key, no quota / visitor     = {:.3}\n  \
         (the key + quota rounds: {} quota statements, {} of them leases, for {} admitted \
         calls, the last flush not waited for)",
        quota / plain,
        quota / visitor,
        plain / visitor,
        after.statements - before.statements,
        after.leases - before.leases,
        after.admitted - before.admitted,
    );
}

/// A fresh instance with the fixture data and the production quota settings, a super
/// administrator, the pro tier's limits set to `limits` (per minute and per day) when
/// given, and a pro member's key.
async fn keyed(quota_enforced: bool, limits: Option<i64>) -> Keyed {
    let app = spawn(quota_enforced).await;
    let admin = app.admin().await;
    if let Some(limit) = limits {
        let body = json!({"per_minute": limit, "per_day": limit, "max_rows": 5000,
                          "max_keys": null, "delay_days": 0, "member_indexes": true});
        let reply = app
            .send_as(
                &admin,
                reqwest::Method::PUT,
                "/api/v1/admin/tiers/pro",
                body,
            )
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
    let key = app.key_of_tier(&admin, "bench", "pro").await;
    let url = format!("{}/api/v1/query", app.address);
    Keyed { app, key, url }
}

/// The production quota settings, step 7 on or off, no keyless limit.
fn production(settings: &mut iq_service::settings::Settings, quota_enforced: bool) {
    let defaults = iq_service::settings::Settings::defaults();
    settings.quota = defaults.quota;
    settings.runtime.quota_enforced = quota_enforced;
    settings.site.website_per_minute = 0;
}

/// `helpers::spawn_with_fixture`, but with the production quota settings.
async fn spawn(quota_enforced: bool) -> TestApp {
    // The production quota settings (the tests flush more often), and the visitor
    // round measures the query path, not the keyless protection.
    let tune: fn(&mut iq_service::settings::Settings) = if quota_enforced {
        |s| production(s, true)
    } else {
        |s| production(s, false)
    };
    helpers::spawn_with(helpers::Spawn::sql(helpers::FIXTURE).tuned(tune)).await
}

/// The pro tier's calls per minute, as the back office lists it.
async fn pro_per_minute(keyed: &Keyed) -> i64 {
    let admin = keyed.app.login_ok("root").await;
    let pro = keyed.app.tier(&admin, "pro").await;
    pro["per_minute"].as_i64().expect("per_minute")
}

fn probe(app: &TestApp) -> Probe {
    Probe {
        quota: app.quota.clone().expect("an in-process instance"),
        database_url: app.database_url.clone(),
    }
}

impl Probe {
    async fn stats(&self) -> QuotaStats {
        self.quota.stats().await.expect("quota shards")
    }

    /// The stats once the statement count has not moved for `quiet`.
    async fn settled(&self, quiet: Duration) -> QuotaStats {
        let mut last = self.stats().await;
        let mut since = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = self.stats().await;
            if now.statements != last.statements {
                (last, since) = (now, Instant::now());
            } else if since.elapsed() > quiet {
                return now;
            }
        }
    }

    /// Rows in `table` of the instance's database.
    async fn count(&self, table: &str) -> u64 {
        let (db, connection) = tokio_postgres::connect(&self.database_url, NoTls)
            .await
            .expect("connect to the bench database");
        let connection = tokio::spawn(connection);
        let row = db
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .expect("count");
        drop(db);
        let _ = connection.await;
        row.get::<_, i64>(0) as u64
    }
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

/// How the clients of [`run`] take turns.
#[derive(Debug, Clone, Copy)]
enum Pace {
    /// Each client sends its next call as soon as the last is answered, for `secs`.
    FlatOut { secs: u64 },
    /// `calls` calls in all, the n-th not before `n / per_sec` seconds from the start.
    Rate { per_sec: f64, calls: u64 },
}

/// What [`run`] got back.
struct Tally {
    /// Answers with code 0.
    ok: u64,
    /// Quota refusals (42901, 42902).
    refused: u64,
    secs: f64,
}

/// Sends the query from `clients` connections as `pace` says. Any answer other than
/// code 0 or a quota refusal fails the bench.
async fn run(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    key: Option<&str>,
    pace: Pace,
    clients: u64,
) -> Tally {
    let issued = Arc::new(AtomicU64::new(0));
    let ok = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (http, url, body) = (http.clone(), url.to_string(), body.clone());
            let (issued, ok, refused) = (issued.clone(), ok.clone(), refused.clone());
            let key = key.map(str::to_string);
            tokio::spawn(async move {
                loop {
                    let n = issued.fetch_add(1, Ordering::Relaxed);
                    match pace {
                        Pace::FlatOut { secs } => {
                            if started.elapsed() >= Duration::from_secs(secs) {
                                break;
                            }
                        }
                        Pace::Rate { per_sec, calls } => {
                            if n >= calls {
                                break;
                            }
                            let at = started + Duration::from_secs_f64(n as f64 / per_sec);
                            tokio::time::sleep_until(at.into()).await;
                        }
                    }
                    let reply = send(&http, &url, &body, key.as_deref()).await;
                    match reply["code"].as_i64() {
                        Some(0) => ok.fetch_add(1, Ordering::Relaxed),
                        Some(42901 | 42902) => refused.fetch_add(1, Ordering::Relaxed),
                        _ => panic!("{reply}"),
                    };
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("client task");
    }
    Tally {
        ok: ok.load(Ordering::Relaxed),
        refused: refused.load(Ordering::Relaxed),
        secs: started.elapsed().as_secs_f64(),
    }
}
