//! The real `iq-service` binary as a child process: the one way tests run the binary.
//!
//! The child gets a clean environment (only `PATH` is kept), the given database, a free
//! port, JSON logs on stderr and whatever the test adds. Its output is drained by two
//! threads so it never blocks on a full pipe; [`Service::stop`] sends SIGTERM (the
//! graceful path a real deployment takes) and hands back the exit status and all the
//! output. Dropping a [`Service`] that was not stopped kills it, so a failing test
//! leaves no process behind.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

use crate::helpers::server_url;

/// The `KEY_SECRET` every child gets unless the test sets its own.
pub const KEY_SECRET: &str = "server-key-secret-for-the-log-test-0123456789";

const READY_DEADLINE: Duration = Duration::from_secs(30);
const STOP_DEADLINE: Duration = Duration::from_secs(15);

/// A child keeps the system clock, so "today" is the real UTC day: a test that counts
/// a day's calls and would start within a minute of UTC midnight first waits for the
/// new day.
pub async fn clear_of_utc_midnight() {
    let now = chrono::Utc::now();
    let midnight = (now.date_naive() + chrono::TimeDelta::days(1))
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    if midnight - now < chrono::TimeDelta::seconds(60) {
        let wait = (midnight - now + chrono::TimeDelta::seconds(2))
            .to_std()
            .unwrap();
        eprintln!("{wait:?} to UTC midnight: waiting for the new day");
        actix_web::rt::time::sleep(wait).await;
    }
}

/// Drops a test database, closing any connection still open to it.
pub async fn drop_database(name: &str) {
    if let Ok((admin, connection)) = tokio_postgres::connect(&server_url(), NoTls).await {
        actix_web::rt::spawn(connection);
        let _ = admin
            .execute(
                &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
                &[],
            )
            .await;
    }
}

/// The database name at the end of a database URL.
pub fn database_name(database_url: &str) -> String {
    database_url.rsplit('/').next().unwrap().to_string()
}

/// SIGTERM to `pid`; whether it was sent. (nix is built without its `signal` feature;
/// the `kill` utility sends it.)
fn send_term(pid: u32) -> bool {
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// Where [`free_port`] picks: below Linux's ephemeral range (32768 and up), so the
/// kernel never hands a picked port to another socket (a test's connection, a listener
/// on port 0) between the pick and the child's bind, which an ephemeral pick allowed.
const PICKED_PORTS: std::ops::Range<u32> = 20_000..30_000;
/// This binary's next pick: no two picks of one run are the same port.
static NEXT_PICK: AtomicU32 = AtomicU32::new(0);

/// A port nothing listens on right now, and that nothing else in this run will pick.
pub fn free_port() -> u16 {
    let span = PICKED_PORTS.end - PICKED_PORTS.start;
    // Starting from the process id keeps two runs on one machine apart.
    let start = std::process::id() % span;
    for _ in 0..span {
        let pick = NEXT_PICK.fetch_add(1, Ordering::Relaxed);
        let port = PICKED_PORTS.start + (start + pick) % span;
        let port = u16::try_from(port).expect("the picked range is below 65536");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("every port from {PICKED_PORTS:?} is taken");
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The service binary running as a child process, its output drained by two threads.
/// Dropping it kills the child, so a failing test leaves no process behind.
pub struct Service {
    child: Option<Child>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

/// How the process ended, and everything it wrote.
pub struct Output {
    pub status: ExitStatus,
    /// SIGTERM could not be sent or the process outlived [`STOP_DEADLINE`], so it was
    /// killed (and `status` is the kill's, not a graceful exit's).
    pub killed: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// stdout and stderr, one after the other.
    pub fn logs(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

impl Service {
    /// Starts the binary on `database_url` with `KEY_SECRET`, JSON logs at `trace`,
    /// one worker and a small pool; `env` adds variables or overrides these.
    pub fn spawn(database_url: &str, env: &[(&str, &str)]) -> Service {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_iq-service"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("DATABASE_URL", database_url)
            .env("LISTEN_ADDR", format!("127.0.0.1:{port}"))
            .env("KEY_SECRET", KEY_SECRET)
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "trace")
            .env("WORKERS", "1")
            .env("DB_POOL_SIZE", "4")
            // Its own port, so services started side by side do not collide.
            .env("METRICS_ADDR", "127.0.0.1:0")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start the iq-service binary");
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        Service {
            child: Some(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// Polls `GET /api/v1/config` until it answers; panics with the output if the
    /// process exits or the deadline passes first.
    pub async fn wait_until_ready(&mut self, http: &reqwest::Client) {
        let deadline = Instant::now() + READY_DEADLINE;
        loop {
            let answer = http
                .get(format!("{}/api/v1/config", self.base))
                .timeout(Duration::from_secs(2))
                .send()
                .await;
            if answer.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            let exited = self.child.as_mut().unwrap().try_wait().unwrap();
            if exited.is_some() || Instant::now() > deadline {
                let output = self.stop();
                panic!(
                    "the service did not become ready (exit: {}):\nstdout:\n{}\nstderr:\n{}",
                    output.status, output.stdout, output.stderr
                );
            }
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// [`Service::spawn`], then [`Service::wait_until_ready`].
    pub async fn start(database_url: &str, env: &[(&str, &str)]) -> Service {
        let mut service = Service::spawn(database_url, env);
        service
            .wait_until_ready(&crate::helpers::http_client())
            .await;
        service
    }

    /// The most resident memory the process has had (`VmHWM`), in bytes.
    pub fn peak_memory_bytes(&self) -> u64 {
        self.memory_status("VmHWM:")
    }

    /// The child's resident memory now, from `/proc`.
    pub fn resident_memory_bytes(&self) -> u64 {
        self.memory_status("VmRSS:")
    }

    /// A `kB` line of `/proc/<pid>/status`, in bytes.
    fn memory_status(&self, field: &str) -> u64 {
        let pid = self.child.as_ref().expect("the service is running").id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/<pid>/status"));
        kib * 1024
    }

    /// Sends SIGTERM and returns at once, so a test can watch the drain; [`Service::stop`]
    /// then waits for the exit.
    pub fn terminate(&self) {
        let child = self.child.as_ref().expect("the service is running");
        assert!(send_term(child.id()), "kill -TERM failed");
    }

    /// SIGKILL at once, as a crash would end it: nothing is drained or given back.
    /// Sends the signal `name` (`STOP`, `CONT`...) and returns at once: SIGSTOP freezes
    /// the process where it is, as a machine that stalls does.
    pub fn signal(&self, name: &str) {
        let pid = self.child.as_ref().expect("the service is running").id();
        let sent = Command::new("kill")
            .args([format!("-{name}"), pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "kill -{name} {pid}");
    }

    pub fn kill(&mut self) -> Output {
        self.end(false)
    }

    /// SIGTERM (graceful shutdown, so shutdown logging is captured too), SIGKILL if it
    /// does not exit in time; then how it exited and everything it wrote.
    pub fn stop(&mut self) -> Output {
        self.end(true)
    }

    /// [`Service::stop`], asserting that the service exited by itself, successfully
    /// (not killed at the deadline); its output.
    pub fn stop_cleanly(&mut self) -> Output {
        let output = self.stop();
        assert!(
            output.status.success() && !output.killed,
            "{}",
            output.logs()
        );
        output
    }

    fn end(&mut self, graceful: bool) -> Output {
        let mut child = self.child.take().expect("the service is running");
        let termed = graceful && send_term(child.id());
        let deadline = Instant::now() + STOP_DEADLINE;
        let (status, killed) = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break (status, false);
            }
            if !termed || Instant::now() > deadline {
                let _ = child.kill();
                break (child.wait().unwrap(), true);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let text = |h: Option<JoinHandle<Vec<u8>>>| {
            String::from_utf8_lossy(&h.unwrap().join().unwrap()).into_owned()
        };
        Output {
            status,
            killed,
            stdout: text(self.stdout.take()),
            stderr: text(self.stderr.take()),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
