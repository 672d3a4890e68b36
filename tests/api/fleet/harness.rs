//! The fleet: three instances of the real binary (child processes, [`Service`]) on one
//! test database behind nginx ([`Nginx`]), and a steady load through the balancer.
//!
//! Each instance listens on a port of its own, kept across restarts; `/metrics` goes to
//! a port of its own too (`METRICS_ADDR=127.0.0.1:0`, as every child gets). Dropping a
//! [`Fleet`] kills the instances and nginx and drops the database, so a failing test
//! leaves nothing behind.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::balancer::Nginx;
use crate::child::{clear_of_utc_midnight, free_port, Service};
use crate::helpers::{connect, create_database, eventually, DropDatabase, Key, Session, TestApp};

/// Instances in the fleet.
pub const INSTANCES: usize = 3;

/// Concurrent clients of the load.
pub const CONCURRENCY: usize = 6;

/// What each client waits between its answer and its next request: six clients make a
/// steady stream of about 200 requests a second.
const PACE: Duration = Duration::from_millis(25);

/// Every instance's settings besides `child.rs`'s (`KEY_SECRET`, one worker, a small
/// pool, `/metrics` on a port of its own): start-up and shutdown lines but no access
/// line per request, and nginx's `X-Forwarded-For` believed.
const INSTANCE_ENV: &[(&str, &str)] = &[
    // Time for the balancer's health check to see /readyz 503 and take the instance
    // out before it stops accepting (deploy/README.md).
    ("SHUTDOWN_DELAY_MS", "2000"),
    ("RUST_LOG", "info"),
    ("ACCESS_LOG", "errors"),
    ("TRUSTED_PROXIES", "127.0.0.1"),
];

/// How long an instance gets to answer `/readyz` with 200 once it serves.
const READY_DEADLINE: Duration = Duration::from_secs(20);

/// Every day from 60 days ago to 10 days ahead is an open day, so any recent date can
/// be imported and a delay-free (pro) key sees everything up to today, whatever the
/// system clock says.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series(current_date - 60, current_date + 10, '1 day') AS d;";

pub struct Fleet {
    pub database_url: String,
    /// Each instance's port, the same across restarts.
    pub ports: [u16; INSTANCES],
    /// `None` while an instance is stopped or after it was killed.
    instances: Vec<Option<Service>>,
    pub nginx: Nginx,
    /// A client of the balancer, with the back-office helpers.
    pub app: TestApp,
    http: reqwest::Client,
    /// Last, so the instances are gone when the database is dropped.
    _database: DropDatabase,
}

impl Fleet {
    /// A new database with an open calendar, three instances on it and nginx in front.
    pub async fn start() -> Fleet {
        // Before anything is started: without nginx, one line saying what to install.
        super::balancer::nginx_binary();
        clear_of_utc_midnight().await;
        let database_url = create_database().await;
        // At once, so a fleet that fails to start leaves no database behind.
        let database = DropDatabase::new(database_url.clone());
        let db = connect(&database_url).await;
        db.batch_execute(CALENDAR).await.expect("the calendar");
        drop(db);

        let ports = [free_port(), free_port(), free_port()];
        let http = crate::helpers::http_client();
        // Started side by side: migrations run under an advisory lock.
        let mut instances: Vec<Service> = ports
            .iter()
            .map(|port| spawn_instance(&database_url, *port))
            .collect();
        for instance in &mut instances {
            until_ready(instance, &http).await;
        }
        let nginx = Nginx::start(&ports);
        let app = TestApp::attach(&nginx.base, &database_url).await;
        let fleet = Fleet {
            _database: database,
            database_url,
            ports,
            instances: instances.into_iter().map(Some).collect(),
            nginx,
            app,
            http,
        };
        let healthz = fleet.app.get("/healthz").await;
        assert_eq!(healthz.status, 200, "through nginx: {}", healthz.body);
        fleet
    }

    /// `http://127.0.0.1:<port>` of instance `i`, to reach it past the balancer.
    pub fn direct(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[i])
    }

    /// A [`TestApp`] talking to instance `i` directly.
    pub async fn direct_app(&self, i: usize) -> TestApp {
        TestApp::attach(&self.direct(i), &self.database_url).await
    }

    /// The first super administrator, signed in through the balancer.
    pub async fn admin(&self) -> Session {
        self.app.admin().await
    }

    /// A pro member's key (10000 calls a minute and a day, no delay).
    pub async fn pro_key(&self, admin: &Session, username: &str) -> Key {
        self.app.key_of_tier(admin, username, "pro").await
    }

    /// SIGTERM to instance `i` (the graceful path: it stops accepting, finishes what it
    /// holds, writes quota usage); asserts it exited 0 on its own.
    pub fn stop(&mut self, i: usize) {
        let mut instance = self.instances[i].take().expect("the instance runs");
        let output = instance.stop();
        assert!(
            !output.killed && output.status.success(),
            "instance {i} did not stop gracefully (exit: {}, killed: {}):\n{}",
            output.status,
            output.killed,
            output.logs()
        );
    }

    /// Starts instance `i` again on its port; returns once `/readyz` answers 200.
    pub async fn start_again(&mut self, i: usize) {
        assert!(self.instances[i].is_none(), "instance {i} still runs");
        let mut instance = spawn_instance(&self.database_url, self.ports[i]);
        until_ready(&mut instance, &self.http).await;
        self.instances[i] = Some(instance);
    }

    /// SIGTERM to instance `i`, returning at once: it drains (`/readyz` 503) before it
    /// stops accepting.
    pub fn terminate(&self, i: usize) {
        self.instances[i]
            .as_ref()
            .expect("the instance runs")
            .terminate();
    }

    /// Whether instance `i` answers `/readyz` with 503 (draining).
    pub async fn draining(&self, i: usize) -> bool {
        let base = format!("http://127.0.0.1:{}", self.ports[i]);
        self.http
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 503)
    }

    /// Takes instance `i` out of nginx's rotation (`down`, then a reload), as a
    /// balancer's health check does when `/readyz` turns 503; returns once nginx holds
    /// no connection to it.
    pub fn take_out(&self, i: usize) {
        self.nginx.reload(Some(self.ports[i]));
    }

    /// Puts every instance in nginx's rotation again.
    pub fn put_back(&self) {
        self.nginx.reload(None);
    }

    /// SIGKILL to instance `i`: no drain, no goodbye.
    pub fn kill(&mut self, i: usize) {
        let instance = self.instances[i].take().expect("the instance runs");
        drop(instance); // Service's drop kills the process and reaps it.
    }
}

/// The binary on `port` of loopback, on `database_url`.
fn spawn_instance(database_url: &str, port: u16) -> Service {
    let listen = format!("127.0.0.1:{port}");
    let mut env = INSTANCE_ENV.to_vec();
    env.push(("LISTEN_ADDR", &listen));
    let mut service = Service::spawn(database_url, &env);
    // `spawn` picked a port of its own; LISTEN_ADDR above overrides it.
    service.base = format!("http://{listen}");
    service
}

/// Until the instance serves, then until `/readyz` answers 200.
async fn until_ready(instance: &mut Service, http: &reqwest::Client) {
    instance.wait_until_ready(http).await;
    let url = format!("{}/readyz", instance.base);
    let ready = eventually(READY_DEADLINE, || async {
        let answer = http.get(&url).send().await;
        answer.is_ok_and(|r| r.status() == 200)
    })
    .await;
    assert!(ready, "{url} did not answer 200");
}

/// One answer the load got.
pub struct Outcome {
    /// HTTP status; 0 when no answer came at all.
    pub status: u16,
    /// The envelope's `code`, when the body was one.
    pub code: Option<i64>,
    /// The body, kept for failures only.
    pub body: String,
    pub ended: Instant,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.status == 200 && self.code == Some(0)
    }

    /// Status, code and body, for a failure message.
    pub fn describe(&self) -> String {
        format!(
            "{} (code {:?}): {}",
            self.status,
            self.code,
            self.body.trim()
        )
    }
}

/// `POST /api/v1/query` (`index_latest`) with `key` at `base`, read into an [`Outcome`].
pub async fn query(http: &reqwest::Client, base: &str, key: &str) -> Outcome {
    let sent = http
        .post(format!("{base}/api/v1/query"))
        .header("X-API-Key", key)
        .json(&json!({"api_name": "index_latest"}))
        .timeout(Duration::from_secs(30))
        .send()
        .await;
    let (status, body) = match sent {
        Ok(response) => {
            let status = response.status().as_u16();
            (status, response.text().await.unwrap_or_default())
        }
        Err(err) => (0, format!("no answer: {err}")),
    };
    let code = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v["code"].as_i64());
    let body = if status == 200 && code == Some(0) {
        String::new()
    } else {
        body
    };
    Outcome {
        status,
        code,
        body,
        ended: Instant::now(),
    }
}

/// [`CONCURRENCY`] clients sending queries with one key through the balancer, each one
/// request at a time, [`PACE`] apart, until [`Load::finish`]. They run on a thread and
/// runtime of their own, so the load goes on while the test blocks (a SIGTERM'd
/// instance is waited for synchronously). Each request opens its own connection to
/// nginx: a reload closes nginx's idle client connections, and a client racing that
/// close is nginx's concern, not the fleet's.
pub struct Load {
    stop: Arc<AtomicBool>,
    in_flight: Arc<AtomicUsize>,
    clients: std::thread::JoinHandle<Vec<Outcome>>,
}

impl Load {
    pub fn start(base: &str, key: &Key) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let (base, key) = (base.to_string(), key.key.clone());
        let clients = {
            let (stop, in_flight) = (stop.clone(), in_flight.clone());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the load");
                runtime.block_on(async move {
                    let http = crate::helpers::http_client_builder()
                        .pool_max_idle_per_host(0)
                        .build()
                        .expect("an HTTP client");
                    let clients: Vec<_> = (0..CONCURRENCY)
                        .map(|_| {
                            let (stop, in_flight) = (stop.clone(), in_flight.clone());
                            let (http, base, key) = (http.clone(), base.clone(), key.clone());
                            tokio::spawn(async move {
                                let mut outcomes = Vec::new();
                                while !stop.load(Ordering::SeqCst) {
                                    in_flight.fetch_add(1, Ordering::SeqCst);
                                    let outcome = query(&http, &base, &key).await;
                                    in_flight.fetch_sub(1, Ordering::SeqCst);
                                    outcomes.push(outcome);
                                    tokio::time::sleep(PACE).await;
                                }
                                outcomes
                            })
                        })
                        .collect();
                    gathered(clients).await
                })
            })
        };
        Load {
            stop,
            in_flight,
            clients,
        }
    }

    /// Requests sent and not yet answered, right now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Stops the clients and hands back every answer they got.
    pub fn finish(self) -> Vec<Outcome> {
        self.stop.store(true, Ordering::SeqCst);
        self.clients.join().expect("the load's thread")
    }
}

/// The answers that were not 200 with code 0, for a failure message.
pub fn failures(outcomes: &[Outcome]) -> Vec<&Outcome> {
    outcomes.iter().filter(|o| !o.ok()).collect()
}

/// Sends `calls` queries with `key` through `base` from [`CONCURRENCY`] clients at once,
/// as fast as they are answered; every answer.
pub async fn burst(base: &str, key: &Key, calls: usize) -> Vec<Outcome> {
    let http = crate::helpers::http_client();
    let clients: Vec<_> = (0..CONCURRENCY)
        .map(|client| {
            let (http, base, key) = (http.clone(), base.to_string(), key.key.clone());
            actix_web::rt::spawn(async move {
                let mut outcomes = Vec::new();
                for _ in (client..calls).step_by(CONCURRENCY) {
                    outcomes.push(query(&http, &base, &key).await);
                }
                outcomes
            })
        })
        .collect();
    gathered(clients).await
}

/// Every answer the `clients` got, client after client.
async fn gathered(clients: Vec<tokio::task::JoinHandle<Vec<Outcome>>>) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for client in clients {
        outcomes.extend(client.await.expect("a client of the load"));
    }
    outcomes
}
