//! Fault injection under load: what the service answers, and what it counts, when the
//! ground moves under it while concurrent clients keep calling.
//!
//! - `db_outage`: PostgreSQL cut off and given back under load; no request hangs, every
//!   answer is a success or 50000, the service recovers by itself and counts exactly;
//! - `sigterm`: SIGTERM to the real binary under load; every request it accepted is
//!   answered, it exits 0, and the usage it writes matches the answers;
//! - `sigkill`: an instance killed (SIGKILL), alone or one of three under load; its
//!   leases come back within the documented bound, the limit holds, usage is never
//!   under-counted and the call log loses at most the last flush interval;
//! - `key_recreated`: a key deleted and another created on one instance while another
//!   instance serves the old key; the account cap (D11) holds over both.
//!
//! The load they share is here: [`Clients`], concurrent clients each sending one query
//! at a time, whose targets follow a [`Plan`] the test moves through phases, and every
//! [`Answer`] they got with when it was sent and when it ended. (The fleet's load
//! generator, `fleet::harness::Load`, sends to one balancer through a module private to
//! `fleet`, so these tests have their own.) Also the database reads the tests check
//! usage with.

mod db_outage;
mod direct_client;
mod key_recreated;
mod sigkill;
mod sigterm;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

/// One answer a client got, or the error it got instead.
#[derive(Debug, Clone)]
pub struct Answer {
    pub client: usize,
    /// Index of the target in the [`Clients`]' list.
    pub target: usize,
    /// HTTP status; 0 when no answer came at all.
    pub status: u16,
    /// The envelope's `code`, when the body was one.
    pub code: Option<i64>,
    /// Whether the answer carried `X-RateLimit-Limit`: the quota was asked (D6).
    pub rate_limited: bool,
    /// No answer because no connection could be made (reqwest's `is_connect`).
    pub connect_error: bool,
    /// An answer began (status and headers) but its body was cut short.
    pub truncated: bool,
    /// The envelope's `request_id`.
    pub request_id: Option<String>,
    /// The transport error, or the body of an answer that was not a success.
    pub detail: String,
    pub sent: Instant,
    pub ended: Instant,
}

impl Answer {
    pub fn ok(&self) -> bool {
        self.status == 200 && self.code == Some(0) && !self.truncated
    }

    pub fn is(&self, status: u16, code: i64) -> bool {
        self.status == status && self.code == Some(code)
    }

    pub fn took(&self) -> Duration {
        self.ended - self.sent
    }

    pub fn describe(&self) -> String {
        format!(
            "client {} target {}: {} (code {:?}) after {:?}: {}",
            self.client,
            self.target,
            self.status,
            self.code,
            self.took(),
            self.detail.trim()
        )
    }
}

/// Where a request goes: an instance and the API key it sends.
#[derive(Debug, Clone)]
pub struct Target {
    pub base: String,
    pub key: String,
}

/// Which target client `client` calls in phase `phase`; `None`: none, it waits.
pub type Plan = fn(client: usize, phase: usize) -> Option<usize>;

/// `POST /api/v1/query` (`index_latest`) with `target`'s key, read into an [`Answer`].
pub async fn query(http: &reqwest::Client, target: &Target, timeout: Duration) -> Answer {
    let sent = Instant::now();
    let response = http
        .post(format!("{}/api/v1/query", target.base))
        .header("X-API-Key", &target.key)
        .json(&json!({"api_name": "index_latest"}))
        .timeout(timeout)
        .send()
        .await;
    let (status, rate_limited, connect_error, truncated, text) = match response {
        Ok(response) => {
            let status = response.status().as_u16();
            let limited = response.headers().contains_key("x-ratelimit-limit");
            match response.text().await {
                Ok(text) => (status, limited, false, false, text),
                Err(err) => (
                    status,
                    limited,
                    false,
                    true,
                    format!("body cut short: {err:?}"),
                ),
            }
        }
        Err(err) => (
            0,
            false,
            err.is_connect(),
            false,
            format!("no answer: {err:?}"),
        ),
    };
    let envelope = serde_json::from_str::<Value>(&text).unwrap_or_default();
    let code = envelope["code"].as_i64();
    let request_id = envelope["request_id"].as_str().map(str::to_string);
    let detail = if status == 200 && code == Some(0) && !truncated {
        String::new()
    } else {
        text
    };
    Answer {
        client: 0,
        target: 0,
        status,
        code,
        rate_limited,
        connect_error,
        truncated,
        request_id,
        detail,
        sent,
        ended: Instant::now(),
    }
}

/// Concurrent clients on the test's runtime, sharing one `reqwest::Client` (so its
/// connection pooling), each sending one query at a time to the target its [`Plan`]
/// names for the current phase, `pace` apart, until [`Clients::finish`] (at most
/// [`LIFETIME`]) or, for one client, until an answer its `last` says ends it.
pub struct Clients {
    phase: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
    tasks: Vec<actix_web::rt::task::JoinHandle<()>>,
}

/// Longest a single request may take before the client gives up on it; far above any
/// bound a test asserts, so a hang shows as a failed answer rather than a stuck test.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest the clients keep calling: far above any test's load, so a test stuck
/// elsewhere does not go on loading the service (and using up its keys' quotas) until
/// CI gives up on it.
const LIFETIME: Duration = Duration::from_secs(180);

impl Clients {
    pub fn start(
        http: reqwest::Client,
        count: usize,
        targets: Vec<Target>,
        plan: Plan,
        pace: Duration,
        last: fn(&Answer) -> bool,
    ) -> Clients {
        let phase = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let targets = Arc::new(targets);
        let end = Instant::now() + LIFETIME;
        let tasks = (0..count)
            .map(|client| {
                let (phase, stop, answers) = (phase.clone(), stop.clone(), answers.clone());
                let (http, targets) = (http.clone(), targets.clone());
                actix_web::rt::spawn(async move {
                    while !stop.load(Ordering::SeqCst) && Instant::now() < end {
                        if let Some(target) = plan(client, phase.load(Ordering::SeqCst)) {
                            let mut answer = query(&http, &targets[target], CLIENT_TIMEOUT).await;
                            answer.client = client;
                            answer.target = target;
                            let done = last(&answer);
                            answers.lock().unwrap().push(answer);
                            if done {
                                return;
                            }
                        }
                        actix_web::rt::time::sleep(pace).await;
                    }
                })
            })
            .collect();
        Clients {
            phase,
            stop,
            answers,
            tasks,
        }
    }

    pub fn set_phase(&self, phase: usize) {
        self.phase.store(phase, Ordering::SeqCst);
    }

    /// Answers so far that `select` picks.
    pub fn count(&self, select: impl Fn(&Answer) -> bool) -> usize {
        self.answers
            .lock()
            .unwrap()
            .iter()
            .filter(|a| select(a))
            .count()
    }

    /// Waits at most `within` until `count` answers so far were successes; fails the
    /// test if they were not, saying how many there were `when`.
    pub async fn await_successes(&self, count: usize, within: Duration, when: &str) {
        let reached = until(within, || self.count(Answer::ok) >= count).await;
        assert!(
            reached,
            "{} successes of {count} {when}",
            self.count(Answer::ok)
        );
    }

    /// Whether every client has ended on its own (its `last` answer).
    pub fn all_ended(&self) -> bool {
        self.tasks.iter().all(|task| task.is_finished())
    }

    /// Stops the clients (each after its request in flight) and hands back every
    /// answer, in the order they ended.
    pub async fn finish(self) -> Vec<Answer> {
        self.stop.store(true, Ordering::SeqCst);
        for task in self.tasks {
            task.await.expect("a client");
        }
        let mut answers = std::mem::take(&mut *self.answers.lock().unwrap());
        answers.sort_by_key(|a| a.ended);
        answers
    }
}

/// Polls `check` every 10 ms until it holds or `within` has passed; whether it held.
pub async fn until(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Reads `read` every 20 ms until it answers `expected` or `within` has passed; the
/// last reading. For what lands in the database on a timer (quota flushes).
pub async fn settles<T, F, Fut>(within: Duration, expected: &T, read: F) -> T
where
    T: PartialEq,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let deadline = Instant::now() + within;
    loop {
        let reading = read().await;
        if reading == *expected || Instant::now() > deadline {
            return reading;
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// (`granted`, `used`) of the day window of `subject` (a key id, or `acct:<user id>`)
/// starting at `day`; (0, 0) when it has no row.
pub async fn day_window(
    db: &tokio_postgres::Client,
    subject: &str,
    day: DateTime<Utc>,
) -> (i64, i64) {
    let row = db
        .query_opt(
            "SELECT granted, used FROM quota_windows \
             WHERE key_id = $1 AND span = 'day' AND window_start = $2",
            &[&subject, &day],
        )
        .await
        .expect("the day window");
    row.map_or((0, 0), |row| (row.get(0), row.get(1)))
}

/// (rows, rows with code 0) of `key_id`'s call log.
pub async fn logged_calls(db: &tokio_postgres::Client, key_id: &str) -> (i64, i64) {
    let row = db
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE code = 0) FROM call_log WHERE key_id = $1",
            &[&key_id],
        )
        .await
        .expect("the call log");
    (row.get(0), row.get(1))
}
